use super::*;
use crate::placement::{KeyHash, Scheme, Server};

const ALL: ClientSlice = ClientSlice { index: 0, of: 1 };

fn router(servers: usize, scheme: Scheme) -> Router {
    let list: Vec<Server> = (0..servers)
        .map(|i| Server {
            host: "127.0.0.1".into(),
            port: 11211 + i as u16,
            weight: 1,
        })
        .collect();
    Router::new(scheme, &list)
}

fn space(count: u64, size: &str, servers: usize) -> KeySpace {
    KeySpace::new(
        count,
        ALL,
        &KeyNames::decimal("mcb:"),
        size.parse().unwrap(),
        Popularity::Uniform,
        1,
        router(servers, Scheme::Ketama),
    )
    .unwrap()
}

#[test]
fn keys_are_stable_padded_and_distinct() {
    let ks = space(1000, "30", 1);
    let mut buf = [0; MAX_KEY_LEN];
    assert_eq!(ks.key(7, &mut buf), b"mcb:00000000000000000000000007");
    let mut seen = std::collections::HashSet::new();
    for i in 0..2000 {
        let k = ks.key(i, &mut buf).to_vec();
        assert_eq!(k.len(), 30);
        assert!(k.iter().all(|b| b.is_ascii_graphic()));
        assert!(seen.insert(k));
    }
}

/// twemperf's names: 8 hex digits of a number that starts at 1.
#[test]
fn hex_keys_from_one_are_twemperfs() {
    let names = KeyNames {
        prefix: "mcp:".into(),
        digits: KeyDigits::Hex,
        first: 1,
    };
    let ks = KeySpace::new(
        1000,
        ALL,
        &names,
        "12".parse().unwrap(),
        Popularity::Sequential,
        1,
        Router::Single,
    )
    .unwrap();
    let mut buf = [0; MAX_KEY_LEN];
    assert_eq!(ks.key(0, &mut buf), b"mcp:00000001");
    assert_eq!(ks.key(9, &mut buf), b"mcp:0000000a");
    assert_eq!(ks.key(999, &mut buf), b"mcp:000003e8");
    // A planned miss is past the space: 2,000 is 7d0.
    assert_eq!(ks.key(1999, &mut buf), b"mcp:000007d0");
    let mut hex = [0; 16];
    assert_eq!(hex_digits(u64::MAX, &mut hex), b"ffffffffffffffff");
    assert_eq!(hex_digits(0, &mut hex), b"0");
}

#[test]
fn expiring_and_window_keys_are_their_own() {
    let ks = space(1000, "30", 3);
    let mut buf = [0; MAX_KEY_LEN];
    let small: std::collections::HashSet<Vec<u8>> =
        (0..2000).map(|i| ks.key(i, &mut buf).to_vec()).collect();
    let mut seen = std::collections::HashSet::new();
    for lane in [0, 1, 9_999] {
        for n in [0, 15, u64::from(u32::MAX)] {
            let id = ks.expiring_key(lane, n);
            assert!(seen.insert(id));
            let key = ks.key(id, &mut buf).to_vec();
            assert!(!small.contains(&key), "{}", String::from_utf8_lossy(&key));
            assert!(key.starts_with(b"mcb:"));
        }
        for k in [0, 5] {
            let id = ks.window_key(lane, 10_000, k);
            assert!(id >= 2000 && seen.insert(id));
            assert_eq!(ks.window_number(lane, 10_000, id), Some(k));
            assert_eq!(ks.window_number(lane + 1, 10_000, id), None);
        }
    }
}

#[test]
fn variable_sizes_are_stable_and_bounded() {
    let ks = space(10_000, "uniform:5,300", 1);
    let mut a = [0; MAX_KEY_LEN];
    for i in 0..10_000 {
        let len = ks.len_of(i);
        assert!((9..=MAX_KEY_LEN).contains(&len));
        assert_eq!(ks.key(i, &mut a).len(), len);
        assert_eq!(len, ks.len_of(i));
    }
}

#[test]
fn too_small_or_impossible_sizes_are_rejected() {
    let new = |n, prefix: &str, size: &str| {
        KeySpace::new(
            n,
            ALL,
            &KeyNames::decimal(prefix),
            size.parse().unwrap(),
            Popularity::Uniform,
            1,
            Router::Single,
        )
    };
    let err = new(1_000_000, "mcb:", "5").unwrap_err();
    assert!(err.to_string().contains("at least 11 bytes"), "{err}");
    assert!(new(10, "mcb:", "fixed:300").is_err());
    assert!(new(10, "has space", "30").is_err());
    assert!(new(0, "k", "30").is_err());
}

#[test]
fn servers_are_where_the_router_puts_the_key_bytes() {
    for scheme in [Scheme::Ketama, Scheme::Modula(KeyHash::Md5), Scheme::Ch3] {
        let r = router(3, scheme);
        for slice in [ALL, ClientSlice { index: 1, of: 3 }] {
            let ks = KeySpace::new(
                3000,
                slice,
                &KeyNames::decimal("k"),
                "30".parse().unwrap(),
                Popularity::Uniform,
                1,
                r.clone(),
            )
            .unwrap();
            assert!(ks.placed());
            let mut buf = [0; MAX_KEY_LEN];
            let mut per = [0u32; 3];
            // In the table (this slice), and outside it (misses).
            for id in (0..6000).chain(ks.ids()) {
                let s = ks.server_of(id);
                assert_eq!(s, r.server_of(ks.key(id, &mut buf)), "{scheme} {id}");
                per[s] += 1;
            }
            assert!(per.iter().all(|&n| n > 1000), "{scheme}: {per:?}");
        }
    }
}

#[test]
fn client_slices_are_disjoint_and_cover_the_space() {
    let mut all = Vec::new();
    for i in 0..3 {
        let ks = KeySpace::new(
            100,
            ClientSlice { index: i, of: 3 },
            &KeyNames::decimal("k"),
            "30".parse().unwrap(),
            Popularity::Uniform,
            1,
            Router::Single,
        )
        .unwrap();
        all.extend(ks.ids());
    }
    all.sort_unstable();
    assert_eq!(all, (0..100).collect::<Vec<_>>());
    assert!("3/3".parse::<ClientSlice>().is_err());
    assert!("x".parse::<ClientSlice>().is_err());
}

#[test]
fn planned_misses_are_outside_the_space() {
    let ks = space(1000, "30", 3);
    let mut rng = SmallRng::seed_from_u64(1);
    for _ in 0..3000 {
        let id = ks.miss(&mut rng);
        assert!((1000..2000).contains(&id), "{id}");
        assert!(!ks.contains(id));
    }
}
