//! Tests through files: generation, reads, errors, portions.

use std::path::PathBuf;

use tempfile::TempDir;

use super::*;

/// A database of `count` molecules from `seed` in a directory of its own
/// (removed when the returned `TempDir` drops).
fn database(count: u64, seed: u64) -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("molecules.db");
    generate(&path, count, seed).expect("generate");
    (dir, path)
}

#[test]
fn generation_is_deterministic() {
    let (_d1, a) = database(500, 7);
    let (_d2, b) = database(500, 7);
    let (_d3, c) = database(500, 8);
    let bytes = |p: &PathBuf| std::fs::read(p).expect("read");
    assert_eq!(bytes(&a).len(), 500 * RECORD_SIZE);
    assert_eq!(bytes(&a), bytes(&b));
    assert_ne!(bytes(&a), bytes(&c));
    // A shorter database is a prefix of a longer one.
    let (_d4, short) = database(123, 7);
    assert_eq!(bytes(&short), bytes(&a)[..123 * RECORD_SIZE]);
}

#[test]
fn reading_ranges_equals_reading_all() {
    let (_dir, path) = database(1000, 1);
    assert_eq!(record_count(&path).ok(), Some(1000));
    let all = read_range(&path, 0..1000).expect("read all");
    assert_eq!(all.len(), 1000);
    for (i, m) in all.iter().enumerate() {
        assert_eq!(*m, Molecule::generate(1, i as u64));
    }
    for n in [1, 3, 7, 16] {
        let mut pieces = Vec::new();
        for rank in 0..n {
            pieces.extend(read_range(&path, portion(1000, rank, n)).expect("read portion"));
        }
        assert_eq!(pieces, all, "{n} portions");
    }
    assert_eq!(read_range(&path, 1000..1000).ok(), Some(Vec::new()));
    assert_eq!(read_range(&path, 999..1000).ok(), Some(all[999..].to_vec()));
}

#[test]
fn top_k_of_portions_merges_to_top_k_of_all() {
    // More records than one read chunk, so top_k reads in several pieces.
    let count = CHUNK + 1000;
    let (_dir, path) = database(count, 3);
    let (k, work) = (10, 1);
    let whole = top_k(&path, 0..count, work, k).expect("top_k");
    // Against scoring everything and sorting.
    let mut all: Vec<Hit> = read_range(&path, 0..count)
        .expect("read")
        .iter()
        .map(|m| Hit {
            id: m.id,
            score: score(m, work),
        })
        .collect();
    all.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
    assert_eq!(whole.hits(), &all[..k]);
    for n in [1, 2, 5, 16] {
        let mut gathered = Vec::new();
        for rank in 0..n {
            let mine = top_k(&path, portion(count, rank, n), work, k).expect("portion");
            gathered.extend(mine.encode());
        }
        assert_eq!(
            TopK::decode(k, &gathered).ok(),
            Some(whole.clone()),
            "{n} ranks"
        );
    }
}

#[test]
fn bad_size_is_a_typed_error() {
    let (dir, path) = database(10, 0);
    let bad = dir.path().join("bad.db");
    let mut bytes = std::fs::read(&path).expect("read");
    bytes.truncate(10 * RECORD_SIZE - 3);
    std::fs::write(&bad, &bytes).expect("write");
    for result in [
        read_range(&bad, 0..1).map(|_| ()),
        record_count(&bad).map(|_| ()),
        top_k(&bad, 0..1, 1, 1).map(|_| ()),
    ] {
        match result {
            Err(ScreenError::BadSize { len, .. }) => assert_eq!(len, 10 * RECORD_SIZE as u64 - 3),
            other => panic!("expected BadSize, got {other:?}"),
        }
    }
}

#[test]
fn out_of_range_is_a_typed_error() {
    let (_dir, path) = database(10, 0);
    #[allow(clippy::reversed_empty_ranges)]
    for range in [0..11, 10..11, 5..4] {
        match read_range(&path, range.clone()) {
            Err(ScreenError::OutOfRange {
                range: r,
                count: 10,
                ..
            }) => assert_eq!(r, range),
            other => panic!("expected OutOfRange for {range:?}, got {other:?}"),
        }
        assert!(matches!(
            top_k(&path, range, 1, 1),
            Err(ScreenError::OutOfRange { .. })
        ));
    }
}

#[test]
fn missing_file_is_an_io_error() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("absent.db");
    match read_range(&path, 0..1) {
        Err(e @ ScreenError::Io { op: "open", .. }) => {
            let ScreenError::Io { source, .. } = &e else {
                unreachable!()
            };
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
            assert!(e.to_string().contains("absent.db"), "{e}");
        }
        other => panic!("expected Io, got {other:?}"),
    }
    match generate(&dir.path().join("no/such/dir.db"), 1, 0) {
        Err(ScreenError::Io { op: "create", .. }) => {}
        other => panic!("expected Io, got {other:?}"),
    }
}
