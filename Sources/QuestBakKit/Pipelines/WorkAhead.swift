import Foundation

/// Work that one thread (the owner, where, say, a SQLite transaction is open) hands to a second
/// core one input at a time, and takes back in the order it handed it over. Unlike `HandOff`,
/// the owner keeps doing everything else itself, in its own order: only the transform runs
/// ahead, on the other core, so whatever the owner throws it throws at the point it always did.
///
/// Inputs wait until `start` gives the transform (what it needs may be known only once the
/// first inputs have been read). The transform must not throw: an input's failure is an output
/// (a `Result`), which the owner meets when it takes that output, after every earlier one.
/// Memory stays flat as long as the owner takes outputs as fast as it submits inputs, over
/// time: nothing waits but what it submitted and has not taken. The owner calls `stop` once,
/// in a `defer`; it returns once the worker's thread has ended.
///
/// It lives in the module that uses it so that it is specialized for the types it carries: in
/// another module (CoreDataStore) every call went through the runtime's generic metadata.
///
/// Inputs and outputs cross in groups (`inputGroup`, `outputGroup`), not one by one: handed
/// over one at a time, each woke the other thread (75,000 lines of another app's store: 17,000
/// context switches, the CPU time 15% up).
final class WorkAhead<Input, Output>: @unchecked Sendable {
    // @unchecked: `waiting`, `done`, `transform`, `stopped`, `ended` and the two flags of who
    // waits are read and written under `condition`; `pending`, `taken`, `takenIndex`,
    // `submitted`, `handedBack` and `started` only by the owner's thread; `work()` runs on the worker's.
    private let condition = NSCondition()
    private var waiting: [Input] = []
    /// Outputs as optionals, so that the owner moves each one out (`next`) rather than copying
    /// it and releasing the array's copy later: a row's arrays retained and released once more.
    private var done: [Output?] = []
    private var transform: ((Input) -> Output)?
    private var stopped = false
    /// True while no worker thread runs (before `start`, and after it has ended).
    private var ended = true
    private var ownerWaits = false
    private var workerWaits = false
    /// Outputs the owner is done with, handed over with its inputs (`recycle`), destroyed on
    /// the worker's thread: where they were made, and where a core has time to spare.
    private var recycled: [Output] = []
    /// Submitted, not yet handed over.
    private var pending: [Input] = []
    /// Recycled, not yet handed over.
    private var spent: [Output] = []
    private var taken: [Output?] = []
    private var takenIndex = 0
    private var submitted = 0
    private var handedBack = 0
    private(set) var started = false
    private let inputGroup: Int
    private let outputGroup: Int

    init(inputGroup: Int = 64, outputGroup: Int = 32) {
        self.inputGroup = max(1, inputGroup)
        self.outputGroup = max(1, outputGroup)
    }

    /// Submits the next input (owner only): handed over with the group it completes, or when
    /// the owner next waits for an output.
    func submit(_ input: Input) {
        pending.append(input)
        submitted += 1
        if pending.count >= inputGroup { handOverPending() }
    }

    private func handOverPending() {
        condition.lock()
        waiting.append(contentsOf: pending)
        // The worker took the last ones (else they wait for the next handover).
        if recycled.isEmpty { swap(&recycled, &spent) }
        if workerWaits { condition.broadcast() }
        condition.unlock()
        pending.removeAll(keepingCapacity: true)
    }

    /// Gives back an output the owner has done with (owner only): it is destroyed on the
    /// worker's thread. An output a restore's row came from was made there and freed on the
    /// owner's, the transaction's thread, which sets the pace: its values' storage released and
    /// freed there, into the other thread's heap, a tenth of that thread's time.
    func recycle(_ output: consuming Output) {
        spent.append(output)
    }

    /// Starts the worker's thread, which transforms every input submitted so far and every one
    /// after it, in order (owner only, once).
    func start(_ transform: @escaping (Input) -> Output) {
        precondition(!started, "WorkAhead.start is called once")
        started = true
        condition.lock()
        self.transform = transform
        ended = false
        condition.unlock()
        let thread = Thread { self.work() }
        // Room for deep JSON in the parser, as the main thread has (HandOff's producer likewise).
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// The output of the earliest input not yet taken, waiting for it if need be (owner only;
    /// after `start`, and never more outputs than inputs submitted).
    func next() -> Output {
        precondition(started && handedBack < submitted, "WorkAhead.next without an input submitted and started")
        // What it submitted since is needed soon, if not for this output: the worker starts on it now.
        if !pending.isEmpty { handOverPending() }
        if takenIndex == taken.count {
            taken.removeAll(keepingCapacity: true)
            takenIndex = 0
            condition.lock()
            while done.isEmpty {
                ownerWaits = true
                condition.wait()
            }
            ownerWaits = false
            swap(&taken, &done)
            condition.unlock()
        }
        var output: Output?
        swap(&output, &taken[takenIndex])
        takenIndex += 1
        handedBack += 1
        guard let output else { preconditionFailure("WorkAhead: an output taken twice") }
        return output
    }

    /// Ends the worker's thread (whatever it had left to do is dropped) and waits for it.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        while !ended { condition.wait() }
        condition.unlock()
    }

    private func work() {
        var inputs: [Input] = []
        var outputs: [Output?] = []
        condition.lock()
        working: while true {
            while waiting.isEmpty && !stopped {
                workerWaits = true
                condition.wait()
            }
            workerWaits = false
            if stopped { break }
            swap(&inputs, &waiting)
            var destroyed: [Output] = []
            swap(&destroyed, &recycled)
            guard let transform else { preconditionFailure("WorkAhead: started without a transform") }
            condition.unlock()
            destroyed.removeAll()
            for (index, input) in inputs.enumerated() {
                outputs.append(transform(input))
                // Published by the group, and at the end of what was handed over (the owner may
                // be waiting for the last of it).
                guard outputs.count >= outputGroup || index == inputs.count - 1 else { continue }
                condition.lock()
                done.append(contentsOf: outputs)
                if ownerWaits { condition.broadcast() }
                if stopped { break working }
                condition.unlock()
                outputs.removeAll(keepingCapacity: true)
            }
            inputs.removeAll(keepingCapacity: true)
            condition.lock()
        }
        ended = true
        condition.broadcast()
        condition.unlock()
    }
}
