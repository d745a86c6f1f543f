import CSystemShims
import Dispatch
import Glibc
import Synchronization

/// A counting semaphore whose `wait` spins for a while before it sleeps.
///
/// Two threads that hand work back and forth every hundred microseconds (the chunking
/// helper and its reader) spend much of that time in the kernel when every hand-off puts
/// one of them to sleep and the other wakes it: a futex wake-up, and in a virtual machine
/// an interrupt between virtual CPUs, costs tens of microseconds. Spinning first keeps
/// both threads running through a file; the sleep is for when the other side is really
/// slow (a cold disk) or gone idle between files.
///
/// How long it spins adapts, as adaptive mutexes do: a wait that slept long halves the
/// next spin (the other side is slow: a cold disk, a loaded machine; down to an eighth),
/// one that the spin, or a short sleep, served restores it. The count goes negative while a thread sleeps: `signal` then wakes
/// it through the underlying `DispatchSemaphore`.
final class SpinningSemaphore: Sendable {
    private let count: Atomic<Int>
    private let sleepers = DispatchSemaphore(value: 0)
    /// The longest spin, in nanoseconds, and the current one.
    private let maximumSpin: Int
    private let currentSpin: Atomic<Int>

    init(value: Int, spinning spin: Duration = .microseconds(200)) {
        count = Atomic(value)
        let (seconds, attoseconds) = spin.components
        maximumSpin = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        currentSpin = Atomic(maximumSpin)
    }

    func signal() {
        if count.add(1, ordering: .releasing).oldValue < 0 { sleepers.signal() }
    }

    /// Takes a unit when one is there at once; never waits.
    func tryWait() -> Bool { tryTake() }

    func wait() {
        if tryTake() { return }
        let spin = currentSpin.load(ordering: .relaxed)
        do {
            let deadline = ContinuousClock.now + .nanoseconds(spin)
            var rounds = 0
            while true {
                for _ in 0..<64 {
                    pkg_cpu_relax()
                    if tryTake() {
                        currentSpin.store(maximumSpin, ordering: .relaxed)
                        return
                    }
                }
                rounds += 1
                if rounds % 4 == 0, ContinuousClock.now >= deadline { break }
            }
        }
        // Give up spinning: take a unit, or owe one and sleep until `signal` pays it.
        guard count.subtract(1, ordering: .acquiring).oldValue <= 0 else { return }
        let asleep = ContinuousClock.now
        sleepers.wait()
        // What the signaller wrote before its releasing add is visible after this load
        // (the semaphore orders it too; this says so in the memory model's own terms).
        _ = count.load(ordering: .acquiring)
        // Woken soon: a spin a little longer would have served. Slept long: spin less.
        let slept = ContinuousClock.now - asleep
        let next = slept < .nanoseconds(maximumSpin) ? maximumSpin : max(spin / 2, maximumSpin / 8)
        currentSpin.store(next, ordering: .relaxed)
    }

    private func tryTake() -> Bool {
        var current = count.load(ordering: .relaxed)
        while current > 0 {
            let (exchanged, original) = count.compareExchange(
                expected: current, desired: current - 1, ordering: .acquiring)
            if exchanged { return true }
            current = original
        }
        return false
    }
}
