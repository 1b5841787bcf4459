//! The checkpointer on a singleton job (one rank, its own buddy): the
//! whole protocol without other processes. The runtime is initialized
//! once per process, so one test runs every case in turn.

use std::path::Path;

use crate::{Checkpointer, Config, Error, Held};

fn state(it: u64) -> Vec<u8> {
    (0..64u64).map(|i| (i * 7 + it * 13) as u8).collect()
}

fn held(own: &[u64], buddy: &[u64]) -> Held {
    Held {
        own: own.to_vec(),
        buddy: buddy.to_vec(),
    }
}

fn flip_last(bytes: &mut [u8]) {
    if let Some(b) = bytes.last_mut() {
        *b ^= 0x10;
    }
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn versions_and_refusals(comm: &pertinax::Comm) {
    let mut ck = Checkpointer::new(comm, Config::default()).expect("new");
    assert_eq!(ck.latest(), None);
    for it in [0, 10, 20] {
        ck.checkpoint(comm, it, &state(it)).expect("checkpoint");
    }
    // keep = 2: the oldest went first.
    assert_eq!(ck.held(), held(&[10, 20], &[10, 20]));
    assert_eq!(ck.latest(), Some(20));
    for it in [20, 15] {
        assert!(matches!(
            ck.checkpoint(comm, it, b"x"),
            Err(Error::InvalidArgument(_))
        ));
    }
    assert_eq!(ck.held(), held(&[10, 20], &[10, 20]));
    assert!(matches!(
        Checkpointer::new(comm, Config { keep: 1, dir: None }),
        Err(Error::InvalidArgument(_))
    ));
    // Nothing committed yet: nothing to restore.
    let mut empty = Checkpointer::new(comm, Config::default()).expect("new");
    assert!(matches!(
        empty.restore(comm, true),
        Err(Error::NoCheckpoint)
    ));
}

fn memory_corruption(comm: &pertinax::Comm) {
    let mut ck = Checkpointer::new(comm, Config::default()).expect("new");
    for it in [10, 20] {
        ck.checkpoint(comm, it, &state(it)).expect("checkpoint");
    }
    // The own image of 20 is damaged: the buddy copy (itself here) serves.
    let mut img = ck.own.get(20).expect("held").to_vec();
    flip_last(&mut img);
    ck.own.insert(20, img);
    assert_eq!(ck.held(), held(&[10], &[10, 20]));
    assert_eq!(ck.restore(comm, false).expect("restore"), (20, state(20)));
    assert_eq!(ck.held(), held(&[10, 20], &[10, 20]));
    // Both copies of 20 damaged: an older version is chosen, and 20 is
    // dropped (it is the rolled back future).
    for v in [&mut ck.own, &mut ck.buddy] {
        let mut img = v.get(20).expect("held").to_vec();
        flip_last(&mut img);
        v.insert(20, img);
    }
    assert_eq!(ck.held(), held(&[10], &[10]));
    assert_eq!(ck.restore(comm, false).expect("restore"), (10, state(10)));
    assert_eq!(ck.held(), held(&[10], &[10]));
    assert_eq!(ck.latest(), Some(10));
    // Going on from there.
    ck.checkpoint(comm, 20, &state(21)).expect("checkpoint");
    assert_eq!(ck.restore(comm, false).expect("restore"), (20, state(21)));
}

fn disk(comm: &pertinax::Comm) {
    let t = tempfile::tempdir().expect("temp dir");
    let config = Config {
        keep: 2,
        dir: Some(t.path().to_path_buf()),
    };
    let mut ck = Checkpointer::new(comm, config.clone()).expect("new");
    let rank_dir = t.path().join("rank-0");
    assert_eq!(ck.files_dir(), Some(rank_dir.as_path()));
    for it in [10, 20, 30] {
        ck.checkpoint(comm, it, &state(it)).expect("checkpoint");
    }
    // The files follow the versions kept.
    assert_eq!(files(&rank_dir), ["ckpt-20.bin", "ckpt-30.bin"]);
    // A crash while writing 40 left its temporary file; the newest file
    // is damaged. A new process (fresh) restores from the files: the tmp
    // file is ignored and the damaged 30 makes it fall back to 20.
    std::fs::write(rank_dir.join(".ckpt-40.bin.tmp"), b"half an image").expect("tmp");
    let f30 = rank_dir.join("ckpt-30.bin");
    let mut bytes = std::fs::read(&f30).expect("read");
    flip_last(&mut bytes);
    std::fs::write(&f30, bytes).expect("write");
    drop(ck);
    let mut ck = Checkpointer::new(comm, config.clone()).expect("new");
    assert_eq!(ck.restore(comm, true).expect("restore"), (20, state(20)));
    assert_eq!(ck.held(), held(&[20], &[20]));
    // The damaged 30 is gone with the rolled back future.
    assert_eq!(files(&rank_dir), [".ckpt-40.bin.tmp", "ckpt-20.bin"]);
    ck.checkpoint(comm, 40, &state(40)).expect("checkpoint");
    // Writing 40 replaced the leftover temporary file.
    assert_eq!(files(&rank_dir), ["ckpt-20.bin", "ckpt-40.bin"]);
    // A user's file stays, and so does the folder then.
    std::fs::write(rank_dir.join("notes"), b"mine").expect("notes");
    ck.remove_files().expect("remove");
    assert_eq!(files(&rank_dir), ["notes"]);
    std::fs::remove_file(rank_dir.join("notes")).expect("rm");
    ck.remove_files().expect("remove");
    assert!(!rank_dir.exists() && t.path().exists());
    // Every file damaged or gone, nothing in memory: nothing to restore.
    let mut ck = Checkpointer::new(comm, config).expect("new");
    assert!(matches!(ck.restore(comm, true), Err(Error::NoCheckpoint)));
}

#[test]
fn singleton() {
    let u = pertinax::init().expect("init");
    let comm = u.world();
    assert_eq!(comm.size(), 1);
    versions_and_refusals(&comm);
    memory_corruption(&comm);
    disk(&comm);
    u.finalize().expect("finalize");
}
