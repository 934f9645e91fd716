import Foundation

/// Two stages on two cores: `produce` runs on a thread of its own and hands items over, in order,
/// to `consume`, which runs on the calling thread (where, say, a SQLite transaction is open).
/// At most `capacity` items wait, so memory stays flat. An error on either side stops both: the
/// producer's reaches the consumer after every item it handed over before it (so errors come
/// in the order the input has them), the consumer's stops the producer at its next hand-over.
/// `run` returns only once the producer's thread has ended.
package enum HandOff {
    /// Thrown inside the producer when the consumer has stopped; never seen by callers.
    private struct Stopped: Error {}

    // @unchecked: every field is read and written under `condition`.
    private final class Channel<Item>: @unchecked Sendable {
        let condition = NSCondition()
        /// Waiting items from `head` on; a taken item's slot is emptied at once, so that a
        /// consumer slower than its producer (the queue never empty) holds no item it has taken.
        var items: [Item?] = []
        var head = 0
        var produced = false
        var failure: Error?
        var stopped = false
        var ended = false
        let capacity: Int

        init(capacity: Int) { self.capacity = capacity }

        func put(_ item: Item) throws {
            condition.lock()
            defer { condition.unlock() }
            while items.count - head >= capacity && !stopped { condition.wait() }
            if stopped { throw Stopped() }
            if head > 0 && (head == items.count || head >= 1024) {
                items.removeFirst(head)
                head = 0
            }
            items.append(item)
            condition.broadcast()
        }

        func take() throws -> Item? {
            condition.lock()
            defer { condition.unlock() }
            while head == items.count && !produced { condition.wait() }
            if head < items.count {
                let item = items[head].take()!
                head += 1
                condition.broadcast()
                return item
            }
            if let failure { throw failure }
            return nil
        }
    }

    // @unchecked: the closure is called once, on the producer's thread only.
    private final class Work: @unchecked Sendable {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    package static func run<Item>(
        capacity: Int, produce: @escaping (_ handOver: (Item) throws -> Void) throws -> Void, consume: (Item) throws -> Void
    ) throws {
        let channel = Channel<Item>(capacity: capacity)
        let work = Work {
            var failure: Error?
            do {
                try produce(channel.put)
            } catch is Stopped {
            } catch {
                failure = error
            }
            channel.condition.lock()
            channel.produced = true
            channel.failure = failure
            channel.ended = true
            channel.condition.broadcast()
            channel.condition.unlock()
        }
        let thread = Thread { work.body() }
        // Room for deep JSON and long lines in the parser, as the main thread has.
        thread.stackSize = 8 << 20
        thread.start()
        defer {
            channel.condition.lock()
            channel.stopped = true
            channel.condition.broadcast()
            while !channel.ended { channel.condition.wait() }
            channel.condition.unlock()
        }
        while let item = try channel.take() {
            try consume(item)
        }
    }
}
