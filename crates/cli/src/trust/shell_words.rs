//! Splitting a hook's `sh -c` command line into simple commands and their
//! words, as far as tack needs it to find what the command runs: quotes and
//! backslashes are removed, `$CLAUDE_PROJECT_DIR` and `$TACK_PROJECT_DIR`
//! expanded, the control operators (`;`, `&`, `|`, `&&`, `||`, newlines,
//! parentheses) separate commands, and redirections with their targets are
//! dropped. What a shell would compute at run time (`$(…)`, backticks,
//! other variables) is kept as written and flagged.

/// One word of a simple command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word {
    /// The word with quotes removed and the project variables expanded.
    pub text: String,
    /// Whether it holds an expansion tack does not follow (another `$…`, a
    /// backtick).
    pub dynamic: bool,
}

/// The simple commands of `line`, each a list of words (never empty).
/// `project` replaces `$CLAUDE_PROJECT_DIR`/`$TACK_PROJECT_DIR` (braced or
/// not).
pub fn simple_commands(line: &str, project: &str) -> Vec<Vec<Word>> {
    let mut commands = Vec::new();
    let mut words: Vec<Word> = Vec::new();
    let mut current: Option<Word> = None;
    // After a redirection operator: the next word is its target, dropped.
    let mut redirect = false;
    let mut chars = line.chars().peekable();
    let end_word = |current: &mut Option<Word>, words: &mut Vec<Word>, redirect: &mut bool| {
        if let Some(word) = current.take() {
            if *redirect {
                *redirect = false;
            } else {
                words.push(word);
            }
        }
    };
    let end_command = |words: &mut Vec<Word>, commands: &mut Vec<Vec<Word>>| {
        if !words.is_empty() {
            commands.push(std::mem::take(words));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => end_word(&mut current, &mut words, &mut redirect),
            '\n' | ';' | '&' | '|' | '(' | ')' => {
                // `2>&1`, `&>`: the `&` belongs to a redirection.
                if c == '&' && chars.peek() == Some(&'>') {
                    end_word(&mut current, &mut words, &mut redirect);
                    chars.next();
                    if chars.peek() == Some(&'>') {
                        chars.next();
                    }
                    redirect = true;
                    continue;
                }
                end_word(&mut current, &mut words, &mut redirect);
                end_command(&mut words, &mut commands);
                redirect = false;
            }
            '>' | '<' => {
                // A file descriptor number before it is part of the operator.
                if let Some(word) = &current
                    && !word.text.is_empty()
                    && word.text.chars().all(|d| d.is_ascii_digit())
                {
                    current = None;
                }
                end_word(&mut current, &mut words, &mut redirect);
                while matches!(chars.peek(), Some('>' | '<' | '&' | '|')) {
                    chars.next();
                }
                // `>&2`: a descriptor, not a file.
                if chars.peek().is_some_and(char::is_ascii_digit) {
                    while chars.peek().is_some_and(char::is_ascii_digit) {
                        chars.next();
                    }
                    continue;
                }
                redirect = true;
            }
            '#' if current.is_none() => {
                // A comment runs to the end of the line.
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
                end_command(&mut words, &mut commands);
            }
            '\'' => {
                let word = current.get_or_insert_with(empty);
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    word.text.push(c);
                }
            }
            '"' => {
                let word = current.get_or_insert_with(empty);
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => {
                            if let Some(next) = chars.next() {
                                if !matches!(next, '"' | '\\' | '$' | '`') {
                                    word.text.push('\\');
                                }
                                word.text.push(next);
                            }
                        }
                        '$' => dollar(&mut chars, word, project),
                        '`' => {
                            word.dynamic = true;
                            word.text.push(c);
                        }
                        c => word.text.push(c),
                    }
                }
            }
            '\\' => {
                let word = current.get_or_insert_with(empty);
                match chars.next() {
                    Some('\n') | None => {}
                    Some(next) => word.text.push(next),
                }
            }
            '$' => dollar(&mut chars, current.get_or_insert_with(empty), project),
            '`' => {
                let word = current.get_or_insert_with(empty);
                word.dynamic = true;
                word.text.push(c);
            }
            c => current.get_or_insert_with(empty).text.push(c),
        }
    }
    end_word(&mut current, &mut words, &mut redirect);
    end_command(&mut words, &mut commands);
    commands
}

fn empty() -> Word {
    Word {
        text: String::new(),
        dynamic: false,
    }
}

/// After a `$`: the project variables expand, anything else is kept and
/// flags the word.
fn dollar(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, word: &mut Word, project: &str) {
    let braced = chars.peek() == Some(&'{');
    if braced {
        chars.next();
    }
    let mut name = String::new();
    while let Some(&c) = chars.peek() {
        if c.is_ascii_alphanumeric() || c == '_' {
            name.push(c);
            chars.next();
        } else {
            break;
        }
    }
    let closed = braced && chars.peek() == Some(&'}');
    if closed {
        chars.next();
    }
    if matches!(name.as_str(), "CLAUDE_PROJECT_DIR" | "TACK_PROJECT_DIR") && (!braced || closed) {
        word.text.push_str(project);
        return;
    }
    word.dynamic = true;
    word.text.push('$');
    if braced {
        word.text.push('{');
    }
    word.text.push_str(&name);
    if closed {
        word.text.push('}');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(line: &str) -> Vec<Vec<String>> {
        simple_commands(line, "/ws")
            .into_iter()
            .map(|c| c.into_iter().map(|w| w.text).collect())
            .collect()
    }

    #[test]
    fn commands_words_quotes_and_redirections() {
        assert_eq!(
            texts("sh \"$CLAUDE_PROJECT_DIR/a b.sh\" && python3 -m x; echo 'hi' >> log.txt 2>&1"),
            [
                vec!["sh", "/ws/a b.sh"],
                vec!["python3", "-m", "x"],
                vec!["echo", "hi"]
            ]
        );
        assert_eq!(
            texts("cat < in.txt | ${TACK_PROJECT_DIR}/bin/t # comment\nnode x\\ y.js"),
            [vec!["cat"], vec!["/ws/bin/t"], vec!["node", "x y.js"]]
        );
        let words = &simple_commands("sh $HOME/x.sh", "/ws")[0];
        assert!(words[1].dynamic);
        assert!(!words[0].dynamic);
        assert_eq!(texts("a &> out; b>err"), [vec!["a"], vec!["b"]]);
    }
}
