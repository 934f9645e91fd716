import CoreDataStore
import Foundation
import GRDB

/// The cloudIDs a merge's Bloom filter flags past the few it looks up in SQL, kept as their
/// hashes (8 bytes each) and settled by one more pass over a column, counting exactly.
///
/// *Why it exists.* The filters (`ProbableSet`) are capped at 4 MiB to keep the merge's peak
/// memory: at 5M estimations that is under 7 bits a cloudID, and a twentieth of the values are
/// flagged, far past the 256 (`InsertedValues.suspectLimit`) whose texts are looked up in SQL.
/// Past that limit the passes used to answer "not shown", and the merge fell back to its key
/// table: a copy of the column, a sort of it (`CREATE INDEX`) and one lookup per archive record
/// through a 2 MB cache, 10 million page reads of the temp file at 5M (75 s of a 106 s merge
/// into its own store), where at 1M (33 bits a cloudID) the filter flagged two.
///
/// *Why the answers stay exact.* Equal bytes have equal hashes (`RecordMerge.hash`). A flagged
/// text that another row of the column also holds makes its hash appear twice in that column
/// (`repeatsIn`), or once in another side's column that holds it (`anyIn`): the pass finds it.
/// A hash found where no equal text is (two texts of one 64-bit hash) answers "not shown", the
/// answer the passes always gave past the limit, after which the merge asks SQL as it always
/// did: a pass can be wrong only towards the slower, exact path, never towards a wrong match.
struct SuspectHashes {
    /// 4 MiB of hashes at most, the filter's own size: at 5M records a store's column flags
    /// about 60,000 of its own values, and a second device's archive about 275,000 (its filter,
    /// full before it is asked, says yes to one value in twenty).
    static let limit = 1 << 19

    private(set) var hashes: [UInt64] = []

    var isEmpty: Bool { hashes.isEmpty }

    /// Keeps `hash`; false when the limit is reached (then the caller answers "not shown").
    mutating func add(_ hash: UInt64) -> Bool {
        guard hashes.count < Self.limit else { return false }
        hashes.append(hash)
        return true
    }

    /// Whether a hash kept here is that of two of the column's values (`sql` selects the one
    /// column): one pass over them, each hashed and looked for among the sorted hashes.
    mutating func repeatsIn(_ sql: String, db: Database) throws -> Bool {
        hashes.sort()
        // One hash flagged twice is held by two rows already.
        if zip(hashes, hashes.dropFirst()).contains(where: { $0 == $1 }) { return true }
        var seen = [Bool](repeating: false, count: hashes.count)
        return try firstKept(in: sql, db: db) { index in
            defer { seen[index] = true }
            return seen[index]
        }
    }

    /// Whether a value of the column `sql` selects has a hash kept here.
    mutating func anyIn(_ sql: String, db: Database) throws -> Bool {
        hashes.sort()
        return try firstKept(in: sql, db: db) { _ in true }
    }

    /// One pass over the column `sql` selects, each text hashed and looked for among the hashes
    /// (sorted by the caller, in place: a sorted copy would hold them twice) until `found` says
    /// yes of one's index; whether it did.
    private func firstKept(in sql: String, db: Database, _ found: (Int) -> Bool) throws -> Bool {
        var answered = false
        try ExactSQL.forEachRow(db, sql: sql) { row in
            guard !answered, let index = row.withText(0, { Self.index(of: RecordMerge.hash($0), in: hashes) }) ?? nil else { return }
            answered = found(index)
        }
        return answered
    }

    private static func index(of hash: UInt64, in sorted: [UInt64]) -> Int? {
        var (low, high) = (0, sorted.count)
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < hash { low = middle + 1 } else { high = middle }
        }
        return low < sorted.count && sorted[low] == hash ? low : nil
    }
}
