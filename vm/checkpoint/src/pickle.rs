//! A pickle decoder that executes nothing: it turns the opcode stream of any
//! protocol (0–5) into an arena of [`Value`]s. Globals stay names, and calls
//! (`REDUCE`, `NEWOBJ`, `BUILD`, …) stay records of what the file asks for;
//! whoever materialises the arena decides which of them may run.
//!
//! Every opcode reads at least one byte and adds at most one value, so a
//! hostile file cannot make the arena, the stack or the memo outgrow it.

use std::collections::HashMap;
use std::fmt;

/// An index into [`Pickle::values`].
pub type Id = usize;

/// What a call record asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum Call {
    /// `REDUCE`, `INST`, `OBJ`: `func(*args)`.
    Reduce { func: Id, args: Id },
    /// `NEWOBJ`, `NEWOBJ_EX`: `cls.__new__(cls, *args, **kwargs)`.
    NewObj {
        cls: Id,
        args: Id,
        kwargs: Option<Id>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    None,
    Bool(bool),
    Int(i64),
    /// An integer beyond `i64`, as little-endian two's-complement bytes.
    BigInt(Vec<u8>),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    ByteArray(Vec<u8>),
    Tuple(Vec<Id>),
    List(Vec<Id>),
    Dict(Vec<(Id, Id)>),
    Set(Vec<Id>),
    FrozenSet(Vec<Id>),
    /// `module.name`, never imported here.
    Global {
        module: String,
        name: String,
    },
    /// The object a persistent id names (a storage, in PyTorch's files).
    Persistent(Id),
    /// An object the file builds by calling something, with the items,
    /// appends and state (`BUILD`) later opcodes gave it.
    Object {
        call: Call,
        items: Vec<(Id, Id)>,
        appends: Vec<Id>,
        state: Option<Id>,
    },
}

/// A decoded pickle: its values and the one the stream returned.
#[derive(Debug)]
pub struct Pickle {
    pub values: Vec<Value>,
    pub root: Id,
}

impl Pickle {
    pub fn get(&self, id: Id) -> &Value {
        &self.values[id]
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PickleError {
    pub message: String,
    /// Where in the stream the decoder stopped.
    pub offset: usize,
}

impl fmt::Display for PickleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at byte {})", self.message, self.offset)
    }
}

impl std::error::Error for PickleError {}

/// Decodes one pickle from the start of `data`; returns it and the number of
/// bytes it took (a legacy PyTorch file holds several pickles in a row).
pub fn decode(data: &[u8]) -> Result<(Pickle, usize), PickleError> {
    Decoder {
        data,
        pos: 0,
        values: Vec::new(),
        stack: Vec::new(),
        marks: Vec::new(),
        memo: HashMap::new(),
    }
    .run()
}

struct Decoder<'a> {
    data: &'a [u8],
    pos: usize,
    values: Vec<Value>,
    stack: Vec<Id>,
    marks: Vec<usize>,
    memo: HashMap<u64, Id>,
}

type R<T> = Result<T, PickleError>;

impl<'a> Decoder<'a> {
    fn err<T>(&self, message: impl Into<String>) -> R<T> {
        Err(PickleError {
            message: message.into(),
            offset: self.pos,
        })
    }

    fn take(&mut self, n: usize) -> R<&'a [u8]> {
        match self
            .pos
            .checked_add(n)
            .filter(|&end| end <= self.data.len())
        {
            Some(end) => {
                let s = &self.data[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => self.err("pickle data was truncated"),
        }
    }

    fn array<const N: usize>(&mut self) -> R<[u8; N]> {
        Ok(self.take(N)?.try_into().expect("took N bytes"))
    }

    fn u8(&mut self) -> R<u8> {
        Ok(self.array::<1>()?[0])
    }

    fn u16(&mut self) -> R<usize> {
        Ok(u16::from_le_bytes(self.array()?) as usize)
    }

    fn u32(&mut self) -> R<usize> {
        Ok(u32::from_le_bytes(self.array()?) as usize)
    }

    fn u64(&mut self) -> R<usize> {
        usize::try_from(u64::from_le_bytes(self.array()?))
            .or_else(|_| self.err("pickle length does not fit in memory"))
    }

    /// A text argument, up to (not including) the newline.
    fn line(&mut self) -> R<&'a [u8]> {
        let rest = &self.data[self.pos..];
        match rest.iter().position(|&b| b == b'\n') {
            Some(n) => {
                self.pos += n + 1;
                Ok(&rest[..n])
            }
            None => self.err("pickle data was truncated"),
        }
    }

    fn line_str(&mut self) -> R<String> {
        let line = self.line()?;
        String::from_utf8(line.to_vec()).or_else(|_| self.err("pickle text argument is not UTF-8"))
    }

    fn utf8(&mut self, n: usize) -> R<String> {
        let bytes = self.take(n)?;
        String::from_utf8(bytes.to_vec()).or_else(|_| self.err("pickle string is not valid UTF-8"))
    }

    fn push(&mut self, v: Value) {
        self.values.push(v);
        self.stack.push(self.values.len() - 1);
    }

    fn pop(&mut self) -> R<Id> {
        let floor = self.marks.last().copied().unwrap_or(0);
        if self.stack.len() <= floor {
            return self.err("unpickling stack underflow");
        }
        Ok(self.stack.pop().expect("checked above"))
    }

    fn top(&self) -> R<Id> {
        match self.stack.last() {
            Some(&id) if self.stack.len() > self.marks.last().copied().unwrap_or(0) => Ok(id),
            _ => self.err("unpickling stack underflow"),
        }
    }

    /// The items pushed since the last MARK, which is removed.
    fn pop_mark(&mut self) -> R<Vec<Id>> {
        let Some(mark) = self.marks.pop() else {
            return self.err("could not find MARK");
        };
        Ok(self.stack.split_off(mark))
    }

    fn memo_get(&mut self, key: u64) -> R<()> {
        match self.memo.get(&key) {
            Some(&id) => {
                self.stack.push(id);
                Ok(())
            }
            None => self.err(format!("Memo value not found at index {key}")),
        }
    }

    fn memo_put(&mut self, key: u64) -> R<()> {
        let id = self.top()?;
        self.memo.insert(key, id);
        Ok(())
    }

    fn global(&mut self, module: String, name: String) {
        self.push(Value::Global { module, name });
    }

    fn object(&mut self, call: Call) {
        self.push(Value::Object {
            call,
            items: Vec::new(),
            appends: Vec::new(),
            state: None,
        });
    }

    fn append(&mut self, target: Id, items: Vec<Id>) -> R<()> {
        match &mut self.values[target] {
            Value::List(v) | Value::Set(v) => v.extend(items),
            Value::Object { appends, .. } => appends.extend(items),
            _ => return self.err("APPEND to an object that is not a list"),
        }
        Ok(())
    }

    fn set_items(&mut self, target: Id, flat: Vec<Id>) -> R<()> {
        if !flat.len().is_multiple_of(2) {
            return self.err("odd number of items for SETITEMS");
        }
        let pairs = flat.chunks(2).map(|p| (p[0], p[1]));
        match &mut self.values[target] {
            Value::Dict(d) => d.extend(pairs),
            Value::Object { items, .. } => items.extend(pairs),
            _ => return self.err("SETITEM on an object that is not a dict"),
        }
        Ok(())
    }

    fn run(mut self) -> R<(Pickle, usize)> {
        loop {
            let op = self.u8()?;
            match op {
                0x80 => {
                    let proto = self.u8()?;
                    if proto > 5 {
                        return self.err(format!("unsupported pickle protocol: {proto}"));
                    }
                }
                0x95 => {
                    self.u64()?; // FRAME: a length hint only.
                }
                b'.' => {
                    let root = self.pop()?;
                    return Ok((
                        Pickle {
                            values: self.values,
                            root,
                        },
                        self.pos,
                    ));
                }
                b'(' => self.marks.push(self.stack.len()),
                b'0' => {
                    self.pop()?;
                }
                b'1' => {
                    self.pop_mark()?;
                }
                b'2' => {
                    let top = self.top()?;
                    self.stack.push(top);
                }
                b'N' => self.push(Value::None),
                0x88 => self.push(Value::Bool(true)),
                0x89 => self.push(Value::Bool(false)),
                b'I' => {
                    let line = self.line_str()?;
                    let v = match line.as_str() {
                        "00" => Value::Bool(false),
                        "01" => Value::Bool(true),
                        s => match s.parse::<i64>() {
                            Ok(i) => Value::Int(i),
                            Err(_) => return self.err(format!("invalid literal for int(): '{s}'")),
                        },
                    };
                    self.push(v);
                }
                b'J' => {
                    let v = i32::from_le_bytes(self.array()?);
                    self.push(Value::Int(v.into()));
                }
                b'K' => {
                    let v = self.u8()?;
                    self.push(Value::Int(v.into()));
                }
                b'M' => {
                    let v = self.u16()?;
                    self.push(Value::Int(v as i64));
                }
                b'L' => {
                    let line = self.line_str()?;
                    let digits = line.strip_suffix('L').unwrap_or(&line);
                    match digits.parse::<i64>() {
                        Ok(i) => self.push(Value::Int(i)),
                        Err(_) => match decimal_to_le_bytes(digits) {
                            Some(b) => self.push(Value::BigInt(b)),
                            None => {
                                return self.err(format!("invalid literal for int(): '{line}'"));
                            }
                        },
                    }
                }
                0x8a | 0x8b => {
                    let n = if op == 0x8a {
                        self.u8()? as usize
                    } else {
                        self.u32()?
                    };
                    let bytes = self.take(n)?.to_vec();
                    self.push(small_int(bytes));
                }
                b'F' => {
                    let line = self.line_str()?;
                    match line.trim().parse::<f64>() {
                        Ok(f) => self.push(Value::Float(f)),
                        Err(_) => {
                            return self
                                .err(format!("could not convert string to float: '{line}'"));
                        }
                    }
                }
                b'G' => {
                    let v = f64::from_be_bytes(self.array()?);
                    self.push(Value::Float(v));
                }
                b'S' => {
                    let line = self.line_str()?;
                    let s = unquote(&line).map(str::to_owned);
                    match s {
                        Some(s) => self.push(Value::Str(s)),
                        None => return self.err("the STRING opcode argument must be quoted"),
                    }
                }
                b'T' | b'U' => {
                    let n = if op == b'T' {
                        self.u32()?
                    } else {
                        self.u8()? as usize
                    };
                    let bytes = self.take(n)?;
                    // Python 2 `str`: decoded as PyTorch's loader does (latin-1 keeps every byte).
                    self.push(Value::Str(bytes.iter().map(|&b| b as char).collect()));
                }
                b'V' => {
                    let line = self.line()?;
                    let s = raw_unicode_escape(line).ok_or_else(|| PickleError {
                        message: "bad UNICODE argument".into(),
                        offset: self.pos,
                    })?;
                    self.push(Value::Str(s));
                }
                b'X' | 0x8c | 0x8d => {
                    let n = match op {
                        b'X' => self.u32()?,
                        0x8c => self.u8()? as usize,
                        _ => self.u64()?,
                    };
                    let s = self.utf8(n)?;
                    self.push(Value::Str(s));
                }
                b'B' | b'C' | 0x8e | 0x96 => {
                    let n = match op {
                        b'B' => self.u32()?,
                        b'C' => self.u8()? as usize,
                        _ => self.u64()?,
                    };
                    let bytes = self.take(n)?.to_vec();
                    self.push(if op == 0x96 {
                        Value::ByteArray(bytes)
                    } else {
                        Value::Bytes(bytes)
                    });
                }
                b']' => self.push(Value::List(Vec::new())),
                b')' => self.push(Value::Tuple(Vec::new())),
                b'}' => self.push(Value::Dict(Vec::new())),
                0x8f => self.push(Value::Set(Vec::new())),
                b'l' => {
                    let items = self.pop_mark()?;
                    self.push(Value::List(items));
                }
                b't' => {
                    let items = self.pop_mark()?;
                    self.push(Value::Tuple(items));
                }
                0x85..=0x87 => {
                    let n = (op - 0x84) as usize;
                    let floor = self.marks.last().copied().unwrap_or(0);
                    if self.stack.len() < floor + n {
                        return self.err("unpickling stack underflow");
                    }
                    let items = self.stack.split_off(self.stack.len() - n);
                    self.push(Value::Tuple(items));
                }
                b'd' => {
                    let flat = self.pop_mark()?;
                    if flat.len() % 2 != 0 {
                        return self.err("odd number of items for DICT");
                    }
                    self.push(Value::Dict(flat.chunks(2).map(|p| (p[0], p[1])).collect()));
                }
                0x91 => {
                    let items = self.pop_mark()?;
                    self.push(Value::FrozenSet(items));
                }
                b'a' => {
                    let item = self.pop()?;
                    let target = self.top()?;
                    self.append(target, vec![item])?;
                }
                b'e' | 0x90 => {
                    let items = self.pop_mark()?;
                    let target = self.top()?;
                    self.append(target, items)?;
                }
                b's' => {
                    let value = self.pop()?;
                    let key = self.pop()?;
                    let target = self.top()?;
                    self.set_items(target, vec![key, value])?;
                }
                b'u' => {
                    let flat = self.pop_mark()?;
                    let target = self.top()?;
                    self.set_items(target, flat)?;
                }
                b'c' => {
                    let module = self.line_str()?;
                    let name = self.line_str()?;
                    self.global(module, name);
                }
                0x93 => {
                    let name = self.pop()?;
                    let module = self.pop()?;
                    match (&self.values[module], &self.values[name]) {
                        (Value::Str(m), Value::Str(n)) => {
                            let (m, n) = (m.clone(), n.clone());
                            self.global(m, n);
                        }
                        _ => return self.err("STACK_GLOBAL requires str"),
                    }
                }
                b'R' => {
                    let args = self.pop()?;
                    let func = self.pop()?;
                    self.object(Call::Reduce { func, args });
                }
                b'i' => {
                    let module = self.line_str()?;
                    let name = self.line_str()?;
                    let items = self.pop_mark()?;
                    self.global(module, name);
                    let func = self.stack.pop().expect("just pushed");
                    self.values.push(Value::Tuple(items));
                    let args = self.values.len() - 1;
                    self.object(Call::Reduce { func, args });
                }
                b'o' => {
                    let mut items = self.pop_mark()?;
                    if items.is_empty() {
                        return self.err("OBJ without a class");
                    }
                    let func = items.remove(0);
                    self.values.push(Value::Tuple(items));
                    let args = self.values.len() - 1;
                    self.object(Call::Reduce { func, args });
                }
                0x81 => {
                    let args = self.pop()?;
                    let cls = self.pop()?;
                    self.object(Call::NewObj {
                        cls,
                        args,
                        kwargs: None,
                    });
                }
                0x92 => {
                    let kwargs = self.pop()?;
                    let args = self.pop()?;
                    let cls = self.pop()?;
                    self.object(Call::NewObj {
                        cls,
                        args,
                        kwargs: Some(kwargs),
                    });
                }
                b'b' => {
                    let new_state = self.pop()?;
                    let target = self.top()?;
                    match &mut self.values[target] {
                        Value::Object { state, .. } => *state = Some(new_state),
                        _ => return self.err("BUILD on an object that was not built by a call"),
                    }
                }
                b'P' => {
                    let pid = self.line_str()?;
                    self.values.push(Value::Str(pid));
                    let id = self.values.len() - 1;
                    self.push(Value::Persistent(id));
                }
                b'Q' => {
                    let pid = self.pop()?;
                    self.push(Value::Persistent(pid));
                }
                b'g' => {
                    let line = self.line_str()?;
                    match line.parse::<u64>() {
                        Ok(k) => self.memo_get(k)?,
                        Err(_) => return self.err("invalid GET argument"),
                    }
                }
                b'h' => {
                    let k = self.u8()?;
                    self.memo_get(k.into())?;
                }
                b'j' => {
                    let k = self.u32()?;
                    self.memo_get(k as u64)?;
                }
                b'p' => {
                    let line = self.line_str()?;
                    match line.parse::<u64>() {
                        Ok(k) => self.memo_put(k)?,
                        Err(_) => return self.err("invalid PUT argument"),
                    }
                }
                b'q' => {
                    let k = self.u8()?;
                    self.memo_put(k.into())?;
                }
                b'r' => {
                    let k = self.u32()?;
                    self.memo_put(k as u64)?;
                }
                0x94 => {
                    let k = self.memo.len() as u64;
                    self.memo_put(k)?;
                }
                0x82..=0x84 => {
                    return self
                        .err("the copyreg extension registry (EXT opcodes) is not supported");
                }
                0x97 | 0x98 => return self.err("out-of-band buffers are not supported"),
                other => {
                    self.pos -= 1;
                    return self.err(format!("invalid load key, '{}'.", escape_byte(other)));
                }
            }
        }
    }
}

/// Python's spelling of a byte in "invalid load key" messages.
fn escape_byte(b: u8) -> String {
    match b {
        0x20..=0x7e if b != b'\\' && b != b'\'' => (b as char).to_string(),
        b'\n' => "\\n".into(),
        b'\r' => "\\r".into(),
        b'\t' => "\\t".into(),
        _ => format!("\\x{b:02x}"),
    }
}

/// `LONG1`/`LONG4` bytes: an `Int` when they fit in `i64`.
fn small_int(bytes: Vec<u8>) -> Value {
    if bytes.is_empty() {
        return Value::Int(0);
    }
    if bytes.len() <= 8 {
        let negative = bytes[bytes.len() - 1] & 0x80 != 0;
        let mut buf = [if negative { 0xff } else { 0 }; 8];
        buf[..bytes.len()].copy_from_slice(&bytes);
        return Value::Int(i64::from_le_bytes(buf));
    }
    Value::BigInt(bytes)
}

/// A decimal literal as little-endian two's-complement bytes.
fn decimal_to_le_bytes(s: &str) -> Option<Vec<u8>> {
    let (negative, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Magnitude in base 256, little-endian.
    let mut mag: Vec<u8> = vec![0];
    for d in digits.bytes() {
        let mut carry = u32::from(d - b'0');
        for byte in mag.iter_mut() {
            let v = u32::from(*byte) * 10 + carry;
            *byte = (v & 0xff) as u8;
            carry = v >> 8;
        }
        while carry > 0 {
            mag.push((carry & 0xff) as u8);
            carry >>= 8;
        }
    }
    mag.push(0); // room for the sign bit
    if negative {
        let mut carry = 1u16;
        for byte in mag.iter_mut() {
            let v = u16::from(!*byte) + carry;
            *byte = (v & 0xff) as u8;
            carry = v >> 8;
        }
    }
    Some(mag)
}

fn unquote(s: &str) -> Option<&str> {
    let s = s.trim_end();
    for q in ['\'', '"'] {
        if let Some(inner) = s.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return Some(inner);
        }
    }
    None
}

/// Python's `raw-unicode-escape`: `\uXXXX` and `\UXXXXXXXX` escapes, other bytes as latin-1.
fn raw_unicode_escape(bytes: &[u8]) -> Option<String> {
    let mut out = String::new();
    let mut i = 0;
    while i < bytes.len() {
        let width = match (bytes[i], bytes.get(i + 1)) {
            (b'\\', Some(b'u')) => 4,
            (b'\\', Some(b'U')) => 8,
            (b, _) => {
                out.push(b as char);
                i += 1;
                continue;
            }
        };
        let hex = bytes.get(i + 2..i + 2 + width)?;
        let code = u32::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
        out.push(char::from_u32(code)?);
        i += 2 + width;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(data: &[u8]) -> (Pickle, Value) {
        let (p, n) = decode(data).expect("decodes");
        assert_eq!(n, data.len());
        let v = p.get(p.root).clone();
        (p, v)
    }

    #[test]
    fn protocol_2_containers_and_memo() {
        // pickle.dumps({'a': [1, 2.5, None, True], 'b': ('x', b'y')}, protocol=2)
        let data = b"\x80\x02}q\x00(X\x01\x00\x00\x00aq\x01]q\x02(K\x01G@\x04\x00\x00\x00\x00\x00\x00N\x88eX\x01\x00\x00\x00bq\x03X\x01\x00\x00\x00xq\x04c_codecs\nencode\nq\x05X\x01\x00\x00\x00yq\x06X\x06\x00\x00\x00latin1q\x07\x86q\x08Rq\x09\x86q\x0au.";
        let (p, v) = root(data);
        let Value::Dict(items) = v else {
            panic!("not a dict: {v:?}")
        };
        assert_eq!(p.get(items[0].0), &Value::Str("a".into()));
        let Value::List(list) = p.get(items[0].1) else {
            panic!()
        };
        let got: Vec<&Value> = list.iter().map(|&i| p.get(i)).collect();
        assert_eq!(
            got,
            [
                &Value::Int(1),
                &Value::Float(2.5),
                &Value::None,
                &Value::Bool(true)
            ]
        );
        let Value::Tuple(t) = p.get(items[1].1) else {
            panic!()
        };
        let Value::Object {
            call: Call::Reduce { func, .. },
            ..
        } = p.get(t[1])
        else {
            panic!()
        };
        assert_eq!(
            p.get(*func),
            &Value::Global {
                module: "_codecs".into(),
                name: "encode".into()
            }
        );
    }

    #[test]
    fn protocol_0_text_opcodes() {
        // pickle.dumps([1, 'é', 3.5, -2**70], protocol=0)
        let data = b"(lp0\nI1\naV\xe9\np1\naF3.5\naL-1180591620717411303424L\na.";
        let (p, v) = root(data);
        let Value::List(items) = v else { panic!() };
        assert_eq!(p.get(items[0]), &Value::Int(1));
        assert_eq!(p.get(items[1]), &Value::Str("é".into()));
        assert_eq!(p.get(items[2]), &Value::Float(3.5));
        let Value::BigInt(b) = p.get(items[3]) else {
            panic!()
        };
        // -2**70 in two's complement: 70 zero bits, then ones.
        assert_eq!(&b[..8], &[0; 8]);
        assert_eq!(b[8], 0xc0);
        assert!(b[9..].iter().all(|&x| x == 0xff));
    }

    #[test]
    fn shared_and_self_referencing_lists_keep_one_id() {
        // l = []; l.append(l); pickle.dumps(l, protocol=2)
        let data = b"\x80\x02]q\x00h\x00a.";
        let (p, v) = root(data);
        assert_eq!(v, Value::List(vec![p.root]));
    }

    #[test]
    fn long1_sign_extension() {
        assert_eq!(small_int(vec![0xff]), Value::Int(-1));
        assert_eq!(small_int(vec![0x00, 0x80]), Value::Int(-32768));
        assert_eq!(small_int(vec![0xff, 0x00]), Value::Int(255));
        assert_eq!(small_int(vec![]), Value::Int(0));
        assert!(matches!(small_int(vec![0; 9]), Value::BigInt(_)));
    }

    #[test]
    fn hostile_streams_fail_cleanly() {
        for data in [
            &b""[..],
            b"\x80\x02",
            b"\x80\x09N.",
            b"a.",
            b"\x80\x02N0.",
            b"\x80\x02h\x05.",
            b"\x80\x02X\xff\xff\xff\xffab.",
            b"\x80\x02(u.",
            b"\x80\x02KK\x85\x82\x01.",
            b"\x80\x02N(Nb.",
            b"\xfe",
        ] {
            assert!(decode(data).is_err(), "{data:?} decoded");
        }
        let e = decode(b"\xfe").unwrap_err();
        assert_eq!(e.message, "invalid load key, '\\xfe'.");
    }

    #[test]
    fn several_pickles_in_a_row() {
        let data = b"\x80\x02K\x01.\x80\x02K\x02.";
        let (first, n) = decode(data).expect("first");
        assert_eq!(first.get(first.root), &Value::Int(1));
        let (second, m) = decode(&data[n..]).expect("second");
        assert_eq!(second.get(second.root), &Value::Int(2));
        assert_eq!(n + m, data.len());
    }

    #[test]
    fn decimal_conversion() {
        assert_eq!(decimal_to_le_bytes("255"), Some(vec![0xff, 0x00]));
        assert_eq!(decimal_to_le_bytes("-1"), Some(vec![0xff, 0xff]));
        assert_eq!(decimal_to_le_bytes("12a"), None);
    }
}
