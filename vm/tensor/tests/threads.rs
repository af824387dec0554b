//! The global pool joined by the calling thread (a test binary of its own,
//! so that no other test has built the global pool first).

use rayon::prelude::*;

#[test]
fn the_caller_becomes_worker_0_and_other_threads_still_get_their_work_done() {
    assert!(fxvm_tensor::threads::join_global_pool());
    assert_eq!(rayon::current_thread_index(), Some(0));
    assert!(rayon::current_num_threads() >= 2);
    let sum: u64 = (0..100_000u64).into_par_iter().sum();
    assert_eq!(sum, 4_999_950_000);
    // Another thread's parallel work is done by the other workers while
    // worker 0 is busy elsewhere (here: waiting for that thread).
    let other = std::thread::spawn(|| (0..1_000u64).into_par_iter().map(|x| x * 2).sum::<u64>());
    assert_eq!(other.join().expect("the other thread"), 999_000);
    // Workers kept searching for work between ops still hand every piece
    // back, and stop searching on their own.
    for round in 0..50u64 {
        fxvm_tensor::threads::keep_warm();
        let sum: u64 = (0..10_000u64).into_par_iter().map(|x| x + round).sum();
        assert_eq!(sum, 49_995_000 + 10_000 * round);
    }
    std::thread::sleep(std::time::Duration::from_millis(5));
    assert!(
        !fxvm_tensor::threads::keeping_warm(),
        "the search stops after a while"
    );
    assert!(!fxvm_tensor::threads::join_global_pool(), "configured once");
}
