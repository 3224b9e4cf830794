//! memcached-tool's `display` mode: one row per slab class with pages,
//! from `stats slabs` and `stats items`, in its columns and widths:
//! `#  Item_Size  Max_age  Pages  Count  Full?  Evicted Evict_Time OOM`.

use super::Stats;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The header line, as memcached-tool prints it.
pub const HEADER: &str = "  #  Item_Size  Max_age   Pages   Count   Full?  Evicted Evict_Time OOM";

/// The table of classes with at least one page: the header, then a row
/// per class in class order.
pub fn display(slabs: &Stats, items: &Stats) -> String {
    let mut classes: BTreeMap<u32, BTreeMap<&str, &str>> = BTreeMap::new();
    // `stats slabs`: `<class>:<field>`; `stats items`: `items:<class>:<field>`.
    let fields = slabs.iter().map(|(k, v)| (k.as_str(), v.as_str())).chain(
        items
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix("items:")?, v.as_str()))),
    );
    for (key, value) in fields {
        let Some((class, field)) = key.split_once(':') else {
            continue;
        };
        if let Ok(class) = class.parse() {
            classes.entry(class).or_default().insert(field, value);
        }
    }
    let mut out = format!("{HEADER}\n");
    for (n, c) in &classes {
        let num = |f: &str| c.get(f).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        if num("total_pages") == 0 {
            continue;
        }
        let chunk = num("chunk_size");
        let size = if chunk < 1024 {
            format!("{chunk}B")
        } else {
            format!("{:.1}K", chunk as f64 / 1024.0)
        };
        // memcached-tool's test; older servers lack used_chunks and give
        // free_chunks_end, which it read before.
        let full = if c.contains_key("used_chunks") {
            num("used_chunks") == num("total_chunks")
        } else {
            num("free_chunks_end") == 0
        };
        let _ = writeln!(
            out,
            "{:3} {:>8} {:>9}s {:7} {:7} {:>7} {:8} {:8} {:4}",
            n,
            size,
            num("age"),
            num("total_pages"),
            num("number"),
            if full { "yes" } else { " no" },
            num("evicted"),
            num("evicted_time"),
            num("outofmemory")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(text: &str) -> Stats {
        text.lines()
            .filter_map(|l| l.strip_prefix("STAT "))
            .filter_map(|l| l.split_once(' '))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn rows_as_memcached_tool_prints_them() {
        // The repcached guide's first row (seed), rebuilt from the stats
        // that produce it.
        let slabs = stats(
            "STAT 12:chunk_size 1352\nSTAT 12:total_pages 4\nSTAT 12:total_chunks 3100\n\
             STAT 12:used_chunks 3100\nSTAT 3:chunk_size 152\nSTAT 3:total_pages 0\n\
             STAT 5:chunk_size 240\nSTAT 5:total_pages 1\nSTAT 5:total_chunks 4369\n\
             STAT 5:used_chunks 10\nSTAT active_slabs 2",
        );
        let items = stats(
            "STAT items:12:number 3048\nSTAT items:12:age 137\nSTAT items:12:evicted 94358\n\
             STAT items:12:evicted_time 4\nSTAT items:12:outofmemory 0\nSTAT items:5:number 10\n\
             STAT items:5:age 3",
        );
        let table = display(&slabs, &items);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines[0], HEADER);
        assert_eq!(
            lines[1],
            "  5     240B         3s       1      10      no        0        0    0"
        );
        assert_eq!(
            lines[2],
            " 12     1.3K       137s       4    3048     yes    94358        4    0"
        );
        assert_eq!(lines.len(), 3);
    }
}
