//! `_fxvm_tokenizers`: the native half of the frozen `tokenizers` package,
//! over Hugging Face's `tokenizers` crate (the Rust core the Python package
//! wraps). Components, padding, truncation, added tokens and trainers cross
//! as the crate's own JSON (what `tokenizer.json` holds and what the Python
//! package's `__getstate__` returns), so each has one definition: the
//! crate's. Offsets are in characters, as the Python package gives them.

pub(crate) use _tokenizers::module_def;

use std::sync::RwLock;

use rustpython_vm::builtins::{PyListRef, PyStrRef, PyType};
use rustpython_vm::function::OptionalArg;
use rustpython_vm::protocol::PyMappingMethods;
use rustpython_vm::types::{AsMapping, Constructor, Representable};
use rustpython_vm::{Py, PyObjectRef, PyPayload, PyRef, PyResult, VirtualMachine, pyclass};

use tokenizers::{
    AddedToken, EncodeInput, InputSequence, PaddingParams, Tokenizer, TruncationParams,
};

use crate::text::Utf8;

/// A tokenizer: `Tokenizer(json)`, the JSON of a `tokenizer.json` file.
#[pyclass(module = "_fxvm_tokenizers", name = "Tokenizer")]
#[derive(Debug, PyPayload)]
struct PyTokenizer {
    inner: RwLock<Tokenizer>,
}

/// `tokenizers.Encoding`: the result of encoding — ids, tokens, offsets
/// (in characters), masks, word and sequence ids, overflowing windows.
#[pyclass(module = "tokenizers", name = "Encoding")]
#[derive(Debug, PyPayload)]
struct PyEncoding {
    inner: RwLock<tokenizers::Encoding>,
}

impl PyEncoding {
    fn new(inner: tokenizers::Encoding) -> Self {
        PyEncoding {
            inner: RwLock::new(inner),
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, tokenizers::Encoding> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, tokenizers::Encoding> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }
}

/// `"left"` or `"right"`, as `Encoding.pad`/`truncate` take a direction.
fn left(direction: OptionalArg<PyStrRef>, vm: &VirtualMachine) -> PyResult<bool> {
    match direction.into_option() {
        None => Ok(false),
        Some(d) => match d.text(vm)? {
            "left" => Ok(true),
            "right" => Ok(false),
            other => Err(vm.new_value_error(format!("Invalid direction: {other}"))),
        },
    }
}

/// The crate's errors as Python's (the package raises `Exception` with the
/// crate's message).
fn error(
    e: impl std::fmt::Display,
    vm: &VirtualMachine,
) -> rustpython_vm::builtins::PyBaseExceptionRef {
    vm.new_exception_msg(
        vm.ctx.exceptions.exception_type.to_owned(),
        e.to_string().into(),
    )
}

fn json_error(
    e: serde_json::Error,
    vm: &VirtualMachine,
) -> rustpython_vm::builtins::PyBaseExceptionRef {
    vm.new_value_error(e.to_string())
}

impl PyTokenizer {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Tokenizer> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Tokenizer> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }
}

impl Constructor for PyTokenizer {
    type Args = PyStrRef;

    fn py_new(_cls: &Py<PyType>, json: Self::Args, vm: &VirtualMachine) -> PyResult<Self> {
        let tokenizer: Tokenizer = json.text(vm)?.parse().map_err(|e| error(e, vm))?;
        Ok(PyTokenizer {
            inner: RwLock::new(tokenizer),
        })
    }
}

/// One input of `encode`/`encode_batch`: text, or words when pretokenized.
fn sequence(
    obj: &PyObjectRef,
    pretokenized: bool,
    vm: &VirtualMachine,
) -> PyResult<InputSequence<'static>> {
    if pretokenized {
        let words: Vec<PyStrRef> = obj.try_to_value(vm).map_err(|_| {
            vm.new_type_error("PreTokenizedInputSequence must be Union[List[str], Tuple[str]]")
        })?;
        let words = words
            .iter()
            .map(|w| w.text(vm).map(str::to_owned))
            .collect::<PyResult<Vec<String>>>()?;
        return Ok(InputSequence::from(words));
    }
    let text: PyStrRef = obj
        .clone()
        .downcast()
        .map_err(|_| vm.new_type_error("TextInputSequence must be str"))?;
    Ok(InputSequence::from(text.text(vm)?.to_owned()))
}

fn input(
    first: &PyObjectRef,
    pair: Option<&PyObjectRef>,
    pretokenized: bool,
    vm: &VirtualMachine,
) -> PyResult<EncodeInput<'static>> {
    let first = sequence(first, pretokenized, vm)?;
    Ok(match pair {
        Some(p) => EncodeInput::Dual(first, sequence(p, pretokenized, vm)?),
        None => EncodeInput::Single(first),
    })
}

/// The two sequences of a batch item that is a pair: a 2-tuple (or list)
/// of texts, or, pretokenized, of word lists.
fn pair_of(item: &PyObjectRef, pretokenized: bool) -> Option<(PyObjectRef, PyObjectRef)> {
    use rustpython_vm::builtins::{PyList, PyStr, PyTuple};
    let items: Vec<PyObjectRef> = match (
        item.downcast_ref::<PyTuple>(),
        item.downcast_ref::<PyList>(),
    ) {
        (Some(t), _) => t.as_slice().to_vec(),
        (None, Some(l)) => l.borrow_vec().to_vec(),
        _ => return None,
    };
    let [a, b] = <[PyObjectRef; 2]>::try_from(items).ok()?;
    let is_words = |o: &PyObjectRef| o.downcast_ref::<PyStr>().is_none();
    (pretokenized == is_words(&a)).then_some((a, b))
}

/// A Python list of `values` (None for a missing one).
fn list<T: Into<i64> + Copy>(
    values: impl IntoIterator<Item = Option<T>>,
    vm: &VirtualMachine,
) -> PyObjectRef {
    let items = values
        .into_iter()
        .map(|v| v.map_or_else(|| vm.ctx.none(), |v| vm.ctx.new_int(v.into()).into()))
        .collect();
    vm.ctx.new_list(items).into()
}

fn strings(values: impl IntoIterator<Item = String>, vm: &VirtualMachine) -> PyObjectRef {
    vm.ctx
        .new_list(
            values
                .into_iter()
                .map(|v| vm.ctx.new_str(v).into())
                .collect(),
        )
        .into()
}

fn encoding(inner: tokenizers::Encoding, vm: &VirtualMachine) -> PyObjectRef {
    PyEncoding::new(inner).into_ref(&vm.ctx).into()
}

#[pyclass(with(Constructor))]
impl PyTokenizer {
    /// The tokenizer as `tokenizer.json` text.
    #[pymethod]
    fn to_str(&self, pretty: bool, vm: &VirtualMachine) -> PyResult<String> {
        self.read().to_string(pretty).map_err(|e| error(e, vm))
    }

    /// An `Encoding` of `sequence` (and `pair`): offsets in characters.
    #[pymethod]
    fn encode(
        &self,
        sequence: PyObjectRef,
        pair: Option<PyObjectRef>,
        pretokenized: bool,
        add_special_tokens: bool,
        vm: &VirtualMachine,
    ) -> PyResult {
        let input = input(&sequence, pair.as_ref(), pretokenized, vm)?;
        let out = self
            .read()
            .encode_char_offsets(input, add_special_tokens)
            .map_err(|e| error(e, vm))?;
        Ok(encoding(out, vm))
    }

    /// Encodings of each input (a sequence, or a (sequence, pair) tuple),
    /// padded together when padding is on.
    #[pymethod]
    fn encode_batch(
        &self,
        inputs: PyListRef,
        pretokenized: bool,
        add_special_tokens: bool,
        vm: &VirtualMachine,
    ) -> PyResult {
        let items = inputs.borrow_vec().to_vec();
        let inputs = items
            .iter()
            .map(|item| match pair_of(item, pretokenized) {
                Some((a, b)) => input(&a, Some(&b), pretokenized, vm),
                None => input(item, None, pretokenized, vm),
            })
            .collect::<PyResult<Vec<_>>>()?;
        let out = self
            .read()
            .encode_batch_char_offsets(inputs, add_special_tokens)
            .map_err(|e| error(e, vm))?;
        Ok(vm
            .ctx
            .new_list(out.into_iter().map(|e| encoding(e, vm)).collect())
            .into())
    }

    #[pymethod]
    fn decode(
        &self,
        ids: Vec<u32>,
        skip_special_tokens: bool,
        vm: &VirtualMachine,
    ) -> PyResult<String> {
        self.read()
            .decode(&ids, skip_special_tokens)
            .map_err(|e| error(e, vm))
    }

    #[pymethod]
    fn decode_batch(
        &self,
        sequences: Vec<PyObjectRef>,
        skip_special_tokens: bool,
        vm: &VirtualMachine,
    ) -> PyResult {
        let sequences = sequences
            .iter()
            .map(|s| s.try_to_value::<Vec<u32>>(vm))
            .collect::<PyResult<Vec<_>>>()?;
        let refs: Vec<&[u32]> = sequences.iter().map(Vec::as_slice).collect();
        let texts = self
            .read()
            .decode_batch(&refs, skip_special_tokens)
            .map_err(|e| error(e, vm))?;
        Ok(strings(texts, vm))
    }

    #[pymethod]
    fn token_to_id(&self, token: PyStrRef, vm: &VirtualMachine) -> PyResult<Option<u32>> {
        Ok(self.read().token_to_id(token.text(vm)?))
    }

    #[pymethod]
    fn id_to_token(&self, id: u32) -> Option<String> {
        self.read().id_to_token(id)
    }

    #[pymethod]
    fn get_vocab(&self, with_added_tokens: bool, vm: &VirtualMachine) -> PyResult {
        let dict = vm.ctx.new_dict();
        for (token, id) in self.read().get_vocab(with_added_tokens) {
            dict.set_item(token.as_str(), vm.ctx.new_int(id).into(), vm)?;
        }
        Ok(dict.into())
    }

    #[pymethod]
    fn get_vocab_size(&self, with_added_tokens: bool) -> usize {
        self.read().get_vocab_size(with_added_tokens)
    }

    /// `{id: added token JSON}` of the added tokens.
    #[pymethod]
    fn added_tokens(&self, vm: &VirtualMachine) -> PyResult {
        let dict = vm.ctx.new_dict();
        let mut tokens: Vec<(u32, AddedToken)> =
            self.read().get_added_tokens_decoder().into_iter().collect();
        tokens.sort_by_key(|(id, _)| *id);
        for (id, token) in tokens {
            let json = serde_json::to_string(&token).map_err(|e| json_error(e, vm))?;
            let key: PyObjectRef = vm.ctx.new_int(id).into();
            dict.set_item(&*key, vm.ctx.new_str(json).into(), vm)?;
        }
        Ok(dict.into())
    }

    /// Adds tokens (JSON of each `AddedToken`), as special ones when
    /// `special`; returns how many were new.
    #[pymethod]
    fn add_tokens(
        &self,
        tokens: Vec<String>,
        special: bool,
        vm: &VirtualMachine,
    ) -> PyResult<usize> {
        let tokens = tokens
            .iter()
            .map(|t| serde_json::from_str::<AddedToken>(t).map_err(|e| json_error(e, vm)))
            .collect::<PyResult<Vec<_>>>()?;
        let mut tokenizer = self.write();
        let added = if special {
            tokenizer.add_special_tokens(tokens)
        } else {
            tokenizer.add_tokens(tokens)
        };
        added.map_err(|e| error(e, vm))
    }

    /// Whether special tokens in the text are split like any other text
    /// rather than matched whole.
    #[pymethod]
    fn get_encode_special_tokens(&self) -> bool {
        self.read().get_encode_special_tokens()
    }

    #[pymethod]
    fn set_encode_special_tokens(&self, value: bool) {
        self.write().set_encode_special_tokens(value);
    }

    #[pymethod]
    fn num_special_tokens_to_add(&self, is_pair: bool) -> usize {
        self.read().get_post_processor().map_or(0, |p| {
            tokenizers::tokenizer::PostProcessor::added_tokens(p, is_pair)
        })
    }

    /// A part's JSON: `normalizer`, `pre_tokenizer`, `post_processor`,
    /// `decoder`, `model`, `padding` or `truncation` (None when unset).
    #[pymethod]
    fn get(&self, part: PyStrRef, vm: &VirtualMachine) -> PyResult<Option<String>> {
        let t = self.read();
        let json = match part.text(vm)? {
            "normalizer" => t.get_normalizer().map(serde_json::to_string),
            "pre_tokenizer" => t.get_pre_tokenizer().map(serde_json::to_string),
            "post_processor" => t.get_post_processor().map(serde_json::to_string),
            "decoder" => t.get_decoder().map(serde_json::to_string),
            "model" => Some(serde_json::to_string(t.get_model())),
            "padding" => t.get_padding().map(serde_json::to_string),
            "truncation" => t.get_truncation().map(serde_json::to_string),
            other => return Err(vm.new_value_error(format!("no tokenizer part '{other}'"))),
        };
        json.transpose().map_err(|e| json_error(e, vm))
    }

    /// Sets a part (see `get`) from its JSON, or removes it with None.
    #[pymethod]
    fn set(&self, part: PyStrRef, json: Option<PyStrRef>, vm: &VirtualMachine) -> PyResult<()> {
        let text = json.as_ref().map(|j| j.text(vm)).transpose()?;
        fn parse<T: serde::de::DeserializeOwned>(
            text: Option<&str>,
            vm: &VirtualMachine,
        ) -> PyResult<Option<T>> {
            text.map(|t| serde_json::from_str(t).map_err(|e| json_error(e, vm)))
                .transpose()
        }
        let mut t = self.write();
        match part.text(vm)? {
            "normalizer" => {
                t.with_normalizer(parse::<tokenizers::normalizers::NormalizerWrapper>(
                    text, vm,
                )?)
                .map_err(|e| error(e, vm))?;
            }
            "pre_tokenizer" => {
                t.with_pre_tokenizer(parse::<tokenizers::pre_tokenizers::PreTokenizerWrapper>(
                    text, vm,
                )?);
            }
            "post_processor" => {
                t.with_post_processor(parse::<tokenizers::processors::PostProcessorWrapper>(
                    text, vm,
                )?);
            }
            "decoder" => {
                t.with_decoder(parse::<tokenizers::decoders::DecoderWrapper>(text, vm)?);
            }
            "model" => {
                let model = parse::<tokenizers::models::ModelWrapper>(text, vm)?
                    .ok_or_else(|| vm.new_type_error("a tokenizer needs a model"))?;
                t.with_model(model);
            }
            "padding" => {
                t.with_padding(parse::<PaddingParams>(text, vm)?);
            }
            "truncation" => {
                t.with_truncation(parse::<TruncationParams>(text, vm)?)
                    .map_err(|e| error(e, vm))?;
            }
            other => return Err(vm.new_value_error(format!("no tokenizer part '{other}'"))),
        }
        Ok(())
    }

    /// Trains the model on `texts` with the trainer whose JSON is given
    /// (`{"BpeTrainer": {...}}`); returns the trainer's JSON after.
    #[pymethod]
    fn train(
        &self,
        trainer: PyStrRef,
        texts: Vec<String>,
        vm: &VirtualMachine,
    ) -> PyResult<String> {
        let mut trainer: tokenizers::models::TrainerWrapper =
            serde_json::from_str(trainer.text(vm)?).map_err(|e| json_error(e, vm))?;
        self.write()
            .train(&mut trainer, texts.into_iter())
            .map_err(|e| error(e, vm))?;
        serde_json::to_string(&trainer).map_err(|e| json_error(e, vm))
    }
}

#[pyclass(with(AsMapping, Representable))]
impl PyEncoding {
    #[pygetset]
    fn ids(&self, vm: &VirtualMachine) -> PyObjectRef {
        list(self.read().get_ids().iter().map(|&v| Some(v)), vm)
    }

    #[pygetset]
    fn type_ids(&self, vm: &VirtualMachine) -> PyObjectRef {
        list(self.read().get_type_ids().iter().map(|&v| Some(v)), vm)
    }

    #[pygetset]
    fn tokens(&self, vm: &VirtualMachine) -> PyObjectRef {
        strings(self.read().get_tokens().iter().cloned(), vm)
    }

    #[pygetset]
    fn offsets(&self, vm: &VirtualMachine) -> PyObjectRef {
        let items = self
            .read()
            .get_offsets()
            .iter()
            .map(|&(a, b)| {
                vm.ctx
                    .new_tuple(vec![vm.ctx.new_int(a).into(), vm.ctx.new_int(b).into()])
                    .into()
            })
            .collect();
        vm.ctx.new_list(items).into()
    }

    #[pygetset]
    fn attention_mask(&self, vm: &VirtualMachine) -> PyObjectRef {
        list(
            self.read().get_attention_mask().iter().map(|&v| Some(v)),
            vm,
        )
    }

    #[pygetset]
    fn special_tokens_mask(&self, vm: &VirtualMachine) -> PyObjectRef {
        list(
            self.read()
                .get_special_tokens_mask()
                .iter()
                .map(|&v| Some(v)),
            vm,
        )
    }

    #[pygetset]
    fn word_ids(&self, vm: &VirtualMachine) -> PyObjectRef {
        list(self.read().get_word_ids().iter().copied(), vm)
    }

    /// The deprecated name of `word_ids`.
    #[pygetset]
    fn words(&self, vm: &VirtualMachine) -> PyObjectRef {
        self.word_ids(vm)
    }

    #[pygetset]
    fn sequence_ids(&self, vm: &VirtualMachine) -> PyObjectRef {
        list(
            self.read()
                .get_sequence_ids()
                .into_iter()
                .map(|v| v.map(|v| v as i64)),
            vm,
        )
    }

    #[pygetset]
    fn n_sequences(&self) -> usize {
        self.read().n_sequences()
    }

    #[pygetset]
    fn overflowing(&self, vm: &VirtualMachine) -> PyObjectRef {
        let items = self
            .read()
            .get_overflowing()
            .iter()
            .map(|e| encoding(e.clone(), vm))
            .collect();
        vm.ctx.new_list(items).into()
    }

    #[pymethod]
    fn token_to_sequence(&self, token_index: usize) -> Option<usize> {
        self.read().token_to_sequence(token_index)
    }

    #[pymethod]
    fn token_to_chars(&self, token_index: usize) -> Option<(usize, usize)> {
        self.read()
            .token_to_chars(token_index)
            .map(|(_, offsets)| offsets)
    }

    #[pymethod]
    fn token_to_word(&self, token_index: usize) -> Option<u32> {
        self.read().token_to_word(token_index).map(|(_, word)| word)
    }

    #[pymethod]
    fn char_to_token(&self, char_pos: usize, sequence_index: OptionalArg<usize>) -> Option<usize> {
        self.read()
            .char_to_token(char_pos, sequence_index.unwrap_or(0))
    }

    #[pymethod]
    fn char_to_word(&self, char_pos: usize, sequence_index: OptionalArg<usize>) -> Option<u32> {
        self.read()
            .char_to_word(char_pos, sequence_index.unwrap_or(0))
    }

    #[pymethod]
    fn word_to_tokens(
        &self,
        word_index: u32,
        sequence_index: OptionalArg<usize>,
    ) -> Option<(usize, usize)> {
        self.read()
            .word_to_tokens(word_index, sequence_index.unwrap_or(0))
    }

    #[pymethod]
    fn word_to_chars(
        &self,
        word_index: u32,
        sequence_index: OptionalArg<usize>,
    ) -> Option<(usize, usize)> {
        self.read()
            .word_to_chars(word_index, sequence_index.unwrap_or(0))
    }

    #[pymethod]
    fn set_sequence_id(&self, sequence_id: usize) {
        self.write().set_sequence_id(sequence_id);
    }

    /// Pads to `length` in place: `pad(length, direction="right", pad_id=0,
    /// pad_type_id=0, pad_token="[PAD]")`.
    #[pymethod]
    fn pad(&self, length: usize, args: PadArgs, vm: &VirtualMachine) -> PyResult<()> {
        let direction = match left(args.direction, vm)? {
            true => tokenizers::PaddingDirection::Left,
            false => tokenizers::PaddingDirection::Right,
        };
        let token = match args.pad_token.into_option() {
            Some(t) => t.text(vm)?.to_owned(),
            None => "[PAD]".to_owned(),
        };
        self.write().pad(
            length,
            args.pad_id.unwrap_or(0),
            args.pad_type_id.unwrap_or(0),
            &token,
            direction,
        );
        Ok(())
    }

    /// Truncates to `max_length` in place, the rest becoming overflowing windows.
    #[pymethod]
    fn truncate(&self, max_length: usize, args: TruncateArgs, vm: &VirtualMachine) -> PyResult<()> {
        let (stride, direction) = (args.stride.unwrap_or(0), args.direction);
        if max_length > 0 && stride >= max_length {
            return Err(vm.new_value_error(format!(
                "stride must be strictly less than max_length={max_length}"
            )));
        }
        let direction = match left(direction, vm)? {
            true => tokenizers::TruncationDirection::Left,
            false => tokenizers::TruncationDirection::Right,
        };
        self.write().truncate(max_length, stride, direction);
        Ok(())
    }

    /// Several encodings made one.
    #[pystaticmethod]
    fn merge(args: MergeArgs) -> PyEncoding {
        let parts: Vec<tokenizers::Encoding> =
            args.encodings.iter().map(|e| e.read().clone()).collect();
        PyEncoding::new(tokenizers::Encoding::merge(
            parts,
            args.growing_offsets.unwrap_or(true),
        ))
    }
}

#[derive(rustpython_vm::FromArgs)]
struct PadArgs {
    #[pyarg(any, optional)]
    direction: OptionalArg<PyStrRef>,
    #[pyarg(any, optional)]
    pad_id: OptionalArg<u32>,
    #[pyarg(any, optional)]
    pad_type_id: OptionalArg<u32>,
    #[pyarg(any, optional)]
    pad_token: OptionalArg<PyStrRef>,
}

#[derive(rustpython_vm::FromArgs)]
struct TruncateArgs {
    #[pyarg(any, optional)]
    stride: OptionalArg<usize>,
    #[pyarg(any, optional)]
    direction: OptionalArg<PyStrRef>,
}

#[derive(rustpython_vm::FromArgs)]
struct MergeArgs {
    #[pyarg(any)]
    encodings: Vec<PyRef<PyEncoding>>,
    #[pyarg(any, optional)]
    growing_offsets: OptionalArg<bool>,
}

impl AsMapping for PyEncoding {
    fn as_mapping() -> &'static PyMappingMethods {
        static AS_MAPPING: PyMappingMethods = PyMappingMethods {
            length: rustpython_vm::atomic_func!(|m, _vm| Ok(PyEncoding::mapping_downcast(m)
                .read()
                .len())),
            ..PyMappingMethods::NOT_IMPLEMENTED
        };
        &AS_MAPPING
    }
}

impl Representable for PyEncoding {
    fn repr_str(zelf: &Py<Self>, _vm: &VirtualMachine) -> PyResult<String> {
        Ok(format!(
            "Encoding(num_tokens={}, attributes=[ids, type_ids, tokens, offsets, attention_mask, special_tokens_mask, overflowing])",
            zelf.read().len()
        ))
    }
}

#[rustpython_vm::pymodule(name = "_fxvm_tokenizers")]
mod _tokenizers {
    use rustpython_vm::VirtualMachine;
    use rustpython_vm::class::PyClassImpl;

    #[pyattr(name = "Tokenizer")]
    fn tokenizer_type(_vm: &VirtualMachine) -> rustpython_vm::builtins::PyTypeRef {
        super::PyTokenizer::make_static_type()
    }

    #[pyattr(name = "Encoding")]
    fn encoding_type(_vm: &VirtualMachine) -> rustpython_vm::builtins::PyTypeRef {
        super::PyEncoding::make_static_type()
    }
}
