//! A unified diff of two texts, line by line (`--dry-run`): Myers' shortest edit script
//! between the lines that differ (the common first and last lines are set aside first, so a
//! large file with a few changes costs little), printed in hunks with three lines of
//! context, as `diff -u` prints them.

const CONTEXT: usize = 3;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Op {
    Same,
    Removed,
    Added,
}

/// `--- PATH` / `+++ PATH (after envelope setup)` and the hunks; empty when equal.
pub fn unified(before: &str, after: &str, path: &str) -> String {
    let a: Vec<&str> = before.split_inclusive('\n').collect();
    let b: Vec<&str> = after.split_inclusive('\n').collect();
    let ops = edit_script(&a, &b);
    if ops.iter().all(|op| *op == Op::Same) {
        return String::new();
    }
    let mut out = format!("--- {path}\n+++ {path} (after envelope setup)\n");
    // (op, line index in a, line index in b) for each step.
    let mut steps = Vec::with_capacity(ops.len());
    let (mut i, mut j) = (0, 0);
    for op in &ops {
        steps.push((*op, i, j));
        match op {
            Op::Same => {
                i += 1;
                j += 1;
            }
            Op::Removed => i += 1,
            Op::Added => j += 1,
        }
    }
    let changed: Vec<usize> = (0..steps.len())
        .filter(|&k| steps[k].0 != Op::Same)
        .collect();
    let mut k = 0;
    while k < changed.len() {
        let start = changed[k].saturating_sub(CONTEXT);
        let mut end = changed[k];
        // Changes closer than twice the context share a hunk.
        while k + 1 < changed.len() && changed[k + 1] <= end + 2 * CONTEXT + 1 {
            k += 1;
            end = changed[k];
        }
        let end = (end + CONTEXT + 1).min(steps.len());
        let hunk = &steps[start..end];
        let old_len = hunk.iter().filter(|s| s.0 != Op::Added).count();
        let new_len = hunk.iter().filter(|s| s.0 != Op::Removed).count();
        let old_start = hunk[0].1 + usize::from(old_len > 0);
        let new_start = hunk[0].2 + usize::from(new_len > 0);
        out.push_str(&format!(
            "@@ -{old_start},{old_len} +{new_start},{new_len} @@\n"
        ));
        for (op, i, j) in hunk {
            let (mark, line) = match op {
                Op::Same => (' ', a[*i]),
                Op::Removed => ('-', a[*i]),
                Op::Added => ('+', b[*j]),
            };
            out.push(mark);
            out.push_str(line.trim_end_matches(['\n', '\r']));
            out.push('\n');
            if !line.ends_with('\n') {
                out.push_str("\\ No newline at end of file\n");
            }
        }
        k += 1;
    }
    out
}

/// The steps from `a` to `b`: the common head and tail as `Same`, Myers between them.
fn edit_script(a: &[&str], b: &[&str]) -> Vec<Op> {
    let head = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let mut ops = vec![Op::Same; head];
    ops.extend(myers(&a[head..a.len() - tail], &b[head..b.len() - tail]));
    ops.extend(std::iter::repeat_n(Op::Same, tail));
    ops
}

/// Myers' O((N+M)D) shortest edit script, backtracked through the saved frontiers.
fn myers(a: &[&str], b: &[&str]) -> Vec<Op> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = (n + m) as usize;
    if max == 0 {
        return Vec::new();
    }
    let offset = max as isize;
    let mut v = vec![0isize; 2 * max + 2];
    let mut trace: Vec<Vec<isize>> = Vec::new();
    'search: for d in 0..=max as isize {
        trace.push(v.clone());
        let mut k = -d;
        while k <= d {
            let at = (k + offset) as usize;
            let mut x = if k == -d || (k != d && v[at - 1] < v[at + 1]) {
                v[at + 1]
            } else {
                v[at - 1] + 1
            };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[at] = x;
            if x >= n && y >= m {
                break 'search;
            }
            k += 2;
        }
    }
    // Back from (n, m): each saved frontier gives the move that reached this diagonal.
    let mut ops = Vec::new();
    let (mut x, mut y) = (n, m);
    for (d, v) in trace.iter().enumerate().rev() {
        let d = d as isize;
        let k = x - y;
        let at = |k: isize| (k + offset) as usize;
        let prev_k = if k == -d || (k != d && v[at(k - 1)] < v[at(k + 1)]) {
            k + 1
        } else {
            k - 1
        };
        let prev_x = if d == 0 { 0 } else { v[at(prev_k)] };
        let prev_y = prev_x - prev_k;
        while x > prev_x && y > prev_y {
            ops.push(Op::Same);
            x -= 1;
            y -= 1;
        }
        if d > 0 {
            if x == prev_x {
                ops.push(Op::Added);
            } else {
                ops.push(Op::Removed);
            }
        }
        x = prev_x;
        y = prev_y;
    }
    ops.reverse();
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(a: &[&str], b: &[&str], ops: &[Op]) -> Vec<String> {
        let (mut i, mut j) = (0, 0);
        let mut out = Vec::new();
        for op in ops {
            match op {
                Op::Same => {
                    assert_eq!(a[i], b[j]);
                    out.push(a[i].to_string());
                    i += 1;
                    j += 1;
                }
                Op::Removed => i += 1,
                Op::Added => {
                    out.push(b[j].to_string());
                    j += 1;
                }
            }
        }
        assert_eq!((i, j), (a.len(), b.len()));
        out
    }

    #[test]
    fn the_script_turns_one_text_into_the_other() {
        let cases: [(&str, &str); 6] = [
            ("", ""),
            ("a\nb\nc\n", "a\nb\nc\n"),
            ("a\nb\nc\n", "a\nx\nc\n"),
            ("", "a\nb\n"),
            ("a\nb\n", ""),
            ("a\nb\nc\nd\ne\n", "b\nc\nx\ne\nf\n"),
        ];
        for (before, after) in cases {
            let a: Vec<&str> = before.split_inclusive('\n').collect();
            let b: Vec<&str> = after.split_inclusive('\n').collect();
            let ops = edit_script(&a, &b);
            assert_eq!(apply(&a, &b, &ops), b, "{before:?} -> {after:?}");
        }
    }

    #[test]
    fn hunks_name_their_lines_like_diff_u() {
        let before = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
        let after = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n";
        assert_eq!(
            unified(before, after, "f"),
            "--- f\n+++ f (after envelope setup)\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
        );
        assert_eq!(unified(before, before, "f"), "");
    }
}
