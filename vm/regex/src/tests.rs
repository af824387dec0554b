use super::*;

fn re(p: &str) -> Regex {
    Regex::new(p, Flags::empty()).unwrap()
}

fn all(p: &str, text: &str) -> Vec<(usize, usize)> {
    re(p)
        .find_all(text, 0, usize::MAX, 0)
        .unwrap()
        .iter()
        .map(|s| s[0].unwrap())
        .collect()
}

fn sub(p: &str, repl: &str, text: &str) -> String {
    let r = re(p);
    let t = Template::parse(repl, r.groups(), r.names()).unwrap();
    r.sub(text, &t, 0).unwrap().0
}

#[test]
fn empty_matches_step_as_python_does() {
    // re.sub('x*', '-', 'abxd') == '-a-b--d-'
    assert_eq!(sub("x*", "-", "abxd"), "-a-b--d-");
    assert_eq!(all("", "ab"), vec![(0, 0), (1, 1), (2, 2)]);
    // After an empty match, a non-empty one may start at the same place.
    assert_eq!(all("|a", "a"), vec![(0, 0), (0, 1), (1, 1)]);
}

#[test]
fn dollar_matches_before_a_final_newline_and_z_only_at_the_end() {
    assert_eq!(all("a$", "a\n"), vec![(0, 1)]);
    assert_eq!(all(r"a\Z", "a\n"), vec![]);
    assert_eq!(all("(?m)a$", "a\na\n"), vec![(0, 1), (2, 3)]);
}

#[test]
fn match_and_fullmatch_anchor_at_pos_and_endpos() {
    let r = re("b+");
    assert_eq!(r.find("abbc", 0, 4, Anchor::Start).unwrap(), None);
    assert_eq!(
        r.find("abbc", 1, 4, Anchor::Start).unwrap(),
        Some(vec![Some((1, 3))])
    );
    assert_eq!(r.find("abbc", 1, 4, Anchor::Full).unwrap(), None);
    assert_eq!(
        r.find("abbc", 1, 3, Anchor::Full).unwrap(),
        Some(vec![Some((1, 3))])
    );
    // `^` is the start of the text, not `pos`.
    assert_eq!(re("^b").find("ab", 1, 2, Anchor::Search).unwrap(), None);
}

#[test]
fn positions_count_characters() {
    let r = re(r"\p{L}+");
    assert_eq!(
        r.find_all("é ab ü", 0, usize::MAX, 0)
            .unwrap()
            .iter()
            .map(|s| s[0].unwrap())
            .collect::<Vec<_>>(),
        vec![(0, 1), (2, 4), (5, 6)]
    );
    assert_eq!(
        r.find("é ab ü", 1, 6, Anchor::Search).unwrap(),
        Some(vec![Some((2, 4))])
    );
}

#[test]
fn python_syntax_is_translated() {
    // Literal braces, `{,n}`, class literals, comments, named groups and references.
    assert_eq!(all("a{", "a{"), vec![(0, 2)]);
    assert_eq!(all("a{,2}", "aaa"), vec![(0, 2), (2, 3), (3, 3)]);
    assert_eq!(all("[[&~-]+", "[&~-"), vec![(0, 4)]);
    assert_eq!(all("a(?#note)b", "ab"), vec![(0, 2)]);
    let r = re(r"(?P<q>['\x22]).*?(?P=q)");
    assert_eq!(r.names(), &[("q".to_owned(), 1)]);
    assert_eq!(
        r.find("say 'hi' now", 0, 100, Anchor::Search).unwrap(),
        Some(vec![Some((4, 8)), Some((4, 5))])
    );
    assert_eq!(all(r"(a)\1", "aa"), vec![(0, 2)]);
    assert_eq!(all(r"\<", "<"), vec![(0, 1)]);
    // Surrogates are in no UTF-8 text: classes of them match nothing.
    assert_eq!(all(r"[\ud800-\udfff]", "a\u{e000}"), vec![]);
    assert_eq!(all(r"[^\ud800-\udfff]", "ab"), vec![(0, 1), (1, 2)]);
    assert_eq!(all(r"[\u0061-\udfffz]", "az\u{e000}"), vec![(0, 1), (1, 2)]);
    assert_eq!(all(r"x\ud800|y", "xy"), vec![(1, 2)]);
    let v = Regex::new("a b # comment\n [ ]", Flags::VERBOSE).unwrap();
    assert_eq!(v.find_all("ab ", 0, 9, 0).unwrap()[0][0], Some((0, 3)));
}

#[test]
fn gpt2_pretokenisation_splits_as_the_regex_package() {
    let p = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
    let text = "Hello world's 123  ok!!\n";
    let pieces: Vec<&str> = all(p, text).iter().map(|&(a, b)| &text[a..b]).collect();
    assert_eq!(
        pieces,
        vec!["Hello", " world", "'s", " 123", " ", " ok", "!!", "\n"]
    );
}

#[test]
fn templates_and_split() {
    assert_eq!(
        sub(r"(\w+)@(?P<host>\w+)", r"\g<host>:\1\n", "me@home"),
        "home:me\n"
    );
    assert_eq!(sub("a", r"\&", "a"), r"\&");
    let r = re("a");
    assert_eq!(
        Template::parse(r"\q", r.groups(), r.names())
            .unwrap_err()
            .to_string(),
        r"bad escape \q at position 2"
    );
    assert_eq!(
        Template::parse(r"\2", 1, &[]).unwrap_err().to_string(),
        "invalid group reference"
    );
    assert!(
        Template::parse(r"\g<nope>", 1, &[])
            .unwrap_err()
            .no_such_group
    );
    let parts = re("(,)|;").split("a,b;c", 0).unwrap();
    assert_eq!(
        parts,
        vec![
            Some("a".into()),
            Some(",".into()),
            Some("b".into()),
            None,
            Some("c".into())
        ]
    );
}

#[test]
fn errors_name_the_position() {
    // As the `regex` package words and places them.
    let error = |p: &str| Regex::new(p, Flags::empty()).unwrap_err().to_string();
    assert_eq!(error("(a"), "missing ) at position 2");
    assert_eq!(error("*a"), "nothing to repeat at position 0");
    assert_eq!(error("a**"), "multiple repeat at position 2");
    assert_eq!(error("a)"), "unbalanced parenthesis at position 1");
    assert_eq!(error("[a"), "unterminated character set at position 2");
    assert_eq!(error(r"\q"), r"bad escape \q at position 2");
    assert_eq!(
        error("a{3,1}"),
        "min repeat greater than max repeat at position 2"
    );
    assert_eq!(error("[z-a]"), "bad character range at position 4");
    assert_eq!(error(r"(a)\2"), "invalid group reference at position 5");
}
