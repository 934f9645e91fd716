import Foundation
import XCTest

@testable import QuestBakKit

/// `WorkAhead` hands its transform's outputs back in the order of their inputs, and destroys on
/// its worker's thread the outputs its owner gives back (`recycle`).
final class WorkAheadTests: XCTestCase {
    /// Counts where its objects were destroyed: on the thread that made the log (the owner's) or
    /// on another.
    final class DestroyedWhere: @unchecked Sendable {
        // @unchecked: the counts are read and written under `lock`.
        private let lock = NSLock()
        private let owner = pthread_self()
        private var onOwner = 0
        private var elsewhere = 0

        func destroyed() {
            let here = pthread_equal(pthread_self(), owner) != 0
            lock.withLock { if here { onOwner += 1 } else { elsewhere += 1 } }
        }

        var counts: (onOwner: Int, elsewhere: Int) { lock.withLock { (onOwner, elsewhere) } }
    }

    final class Output {
        let number: Int
        let log: DestroyedWhere

        init(_ number: Int, log: DestroyedWhere) {
            self.number = number
            self.log = log
        }

        deinit { log.destroyed() }
    }

    func testOutputsComeInTheInputsOrderAndThoseGivenBackAreDestroyedOnTheWorkersThread() {
        let log = DestroyedWhere()
        var numbers: [Int] = []
        do {
            let ahead = WorkAhead<Int, Output>(inputGroup: 4, outputGroup: 2)
            for number in 0..<8 { ahead.submit(number) }
            ahead.start { Output($0 * 2, log: log) }
            for number in 8..<408 {
                if number < 400 { ahead.submit(number) }
                let output = ahead.next()
                numbers.append(output.number)
                ahead.recycle(output)
            }
            ahead.stop()
        }
        XCTAssertEqual(numbers, (0..<400).map { $0 * 2 })
        // Every output is destroyed; the last ones given back wait for a handover that never
        // comes (the `WorkAhead` destroys them), the others went to the worker. The worker's
        // thread holds the `WorkAhead` until its closure returns, which can be just after `stop`
        // returns: the last ones may be destroyed there a moment after this block (seen in a
        // CI-like run: 388 of 400 counted at once), so the count is waited for, up to 10 s.
        let deadline = Date().addingTimeInterval(10)
        while log.counts.onOwner + log.counts.elsewhere < 400 && Date() < deadline { usleep(1_000) }
        let counts = log.counts
        XCTAssertEqual(counts.onOwner + counts.elsewhere, 400, "\(counts)")
        XCTAssertGreaterThan(counts.elsewhere, 300, "\(counts)")
    }
}
