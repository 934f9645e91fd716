import CoreDataStore
import Foundation
import GRDB

/// The cloudIDs a merge's Bloom filter flags ("maybe seen"), each a suspect of being held twice
/// (a store's column) or on both sides (an archive's against the store's), and how they are
/// settled: while there are at most 256 (`InsertedValues.suspectLimit`), their texts are looked
/// up in SQL; past that, by their hashes (8 bytes each), with one more pass over a column.
///
/// *Why hashes past 256.* The filters (`ProbableSet`) are capped at 4 MiB to keep the merge's
/// peak memory: at 5M estimations that is under 7 bits a cloudID, and a twentieth of the values
/// are flagged, far past the 256 whose texts are looked up in SQL. Past that limit the passes
/// used to answer "not shown", and the merge fell back to its key table: a copy of the column, a
/// sort of it (`CREATE INDEX`) and one lookup per archive record through a 2 MB cache, 10 million
/// page reads of the temp file at 5M (75 s of a 106 s merge into its own store), where at 1M (33
/// bits a cloudID) the filter flagged two.
///
/// *Why every suspect is hashed past 256, the first 256 too.* Their SQL (an `IN` list, which no
/// index serves on a Core Data cloudID column) reads the whole table, as the pass over the hashes
/// does: asked both ways, a 5M-record column was read twice (0.9 s each at 5M). And where a
/// store's own suspects and an archive's are both past 256 (`settle(repeats:anyOf:column:rows:db:)`), one
/// pass over the store's column settles both.
///
/// *Why the answers stay exact.* Equal bytes have equal hashes (`RecordMerge.hash`). A flagged
/// text that another row of the column also holds makes its hash appear twice in that column
/// (`settle`'s `repeats`), or once in another side's column that holds it (its `anyOf`): the pass finds it.
/// A hash found where no equal text is (two texts of one 64-bit hash) answers "not shown", the
/// answer the passes always gave past the limit, after which the merge asks SQL as it always
/// did: a pass can be wrong only towards the slower, exact path, never towards a wrong match.
/// The SQL it stands for compares texts byte for byte: the `GROUP BY` of a table declaring no
/// collation (one that declares one is asked in SQL: `RecordMerge.CloudIDPass`), and the cloudID
/// key's lookup, which compares BINARY whatever the column declares.
struct SuspectHashes {
    /// 4 MiB of hashes at most, the filter's own size: at 5M records a store's column flags
    /// about 60,000 of its own values, and a second device's archive about 275,000 (its filter,
    /// full before it is asked, says yes to one value in twenty).
    static let limit = 1 << 19

    private(set) var hashes: [UInt64] = []
    /// The suspects' values, as read, while there are at most `InsertedValues.suspectLimit`.
    private(set) var values: [StoredValue] = []

    var isEmpty: Bool { hashes.isEmpty }

    /// Whether the suspects are few enough to be looked up in SQL (their `values`).
    var areFew: Bool { hashes.count <= InsertedValues.suspectLimit }

    /// Keeps a suspect (`value()` is read only while the suspects are few); false when the limit
    /// is reached (then the caller answers "not shown").
    mutating func add(_ hash: UInt64, value: () -> StoredValue) -> Bool {
        guard hashes.count < Self.limit else { return false }
        hashes.append(hash)
        if areFew {
            values.append(value())
        } else if !values.isEmpty {
            values = []
        }
        return true
    }

    /// A store pass's suspects taken out of it (`keeping`: else none), and its filter of the
    /// store's hashes dropped, for a settling that needs neither: left in the pass, the filter
    /// (4 MiB at 5M) would stay allocated through the settling's pass over the store's column,
    /// beside the read-back proof's buffers at the merge's peak memory, and the suspects, still
    /// referenced there, would be copied when sorted.
    static func release(_ suspects: inout SuspectHashes, filter: inout ProbableSet, keeping: Bool) -> SuspectHashes {
        filter = ProbableSet(expectedCount: 0)
        var taken = SuspectHashes()
        if keeping { swap(&taken, &suspects) }
        return taken
    }

    /// Whether a suspect is held by two of the rows `rows` ("FROM … WHERE …") selects in `column`:
    /// in SQL while they are few (`InsertedValues.anyRepeated`), else by one pass over the hashes.
    mutating func anyRepeated(column: String, rows: String, db: Database) throws -> Bool {
        if areFew { return try InsertedValues.anyRepeated(values.map { [$0] }, columns: [column], rows: rows, db: db) }
        var none = SuspectHashes()
        return try Self.settle(repeats: &self, anyOf: &none, column: column, rows: rows, db: db).repeats
    }

    /// A store's own suspects (`repeats`) and an archive's suspects of being held by the store
    /// (`anyOf`), settled by one pass over the store's `column` of the rows `rows` selects:
    /// whether one of `repeats` is held by two of them, and whether one of `anyOf` is held by one.
    /// Hashed whatever their number: the caller asks a side in SQL instead only where both are
    /// few, so that where either needs this pass, the column is read once for both.
    static func settle(
        repeats: inout SuspectHashes, anyOf: inout SuspectHashes, column: String, rows: String, db: Database
    ) throws
        -> (repeats: Bool, any: Bool)
    {
        // Sorted in place, bucket by bucket (`BucketIndex.init(sorting:)`): a sorted copy would
        // hold them twice, and the standard library's sort takes a buffer of half their count.
        let (repeatsIndex, anyOfIndex) = (BucketIndex(sorting: &repeats.hashes), BucketIndex(sorting: &anyOf.hashes))
        // One hash flagged twice is held by two rows already.
        var repeated = zip(repeats.hashes, repeats.hashes.dropFirst()).contains { $0 == $1 }
        var found = false
        // Whether each of `repeats` was met in the pass (none: nothing left to ask of them).
        var met = [Bool](repeating: false, count: repeated ? 0 : repeats.hashes.count)
        var asking: Bool { !(repeated || met.isEmpty) || !(found || anyOf.isEmpty) }
        guard asking else { return (repeated, found) }
        try ExactSQL.forEachRow(db, sql: "SELECT \(column) \(rows)") { row in
            guard asking else { return }
            row.withText(0) { bytes in
                let hash = RecordMerge.hash(bytes)
                if !(repeated || met.isEmpty), let index = repeatsIndex.index(of: hash, in: repeats.hashes) {
                    repeated = met[index]
                    met[index] = true
                }
                if !found, !anyOf.isEmpty { found = anyOfIndex.index(of: hash, in: anyOf.hashes) != nil }
            }
        }
        return (repeated, found)
    }

    /// Where each hash's top bits start in a sorted array of hashes, so that a look-up searches
    /// the few of its bucket: a binary search of the whole array (275,000 hashes, 2.2 MB, at 5M)
    /// missed the cache on each of its last steps, twice a value of a 5M-record column. Four to
    /// eight hashes a bucket, 4 bytes a bucket: an eighth of the hashes' own memory at most.
    struct BucketIndex {
        private let shift: UInt64
        private let starts: [UInt32]

        /// Sorts `hashes` in place and indexes them: each hash moved into its bucket (the
        /// buckets' places counted first, then each out-of-place hash swapped into the next free
        /// place of its own bucket), then each bucket sorted. No buffer but the index and the
        /// buckets' next free places (4 bytes a bucket each), where the standard library's sort
        /// of the whole array takes one of half its count (a merge sort: 1 MiB for a second
        /// device's archive at 5M, held beside the suspects at the merge's peak memory).
        init(sorting hashes: inout [UInt64]) {
            var bits = 0
            while bits < 32 && 8 << bits < hashes.count { bits += 1 }
            let shift = UInt64(64 - bits)
            let buckets = 1 << bits
            // A shift by 64 (one bucket) gives 0: Swift's `>>` does not wrap its count.
            func bucket(_ hash: UInt64) -> Int { Int(hash >> shift) }
            // starts[b] is the first index of bucket b; starts[buckets] the count.
            var starts = [UInt32](repeating: 0, count: buckets + 1)
            for hash in hashes { starts[bucket(hash) + 1] += 1 }
            for index in 0..<buckets { starts[index + 1] += starts[index] }
            var next = Array(starts.dropLast())
            hashes.withUnsafeMutableBufferPointer { hashes in
                for current in 0..<buckets {
                    let end = Int(starts[current + 1])
                    // Every place before next[current] holds a hash of its own bucket.
                    while Int(next[current]) < end {
                        let place = Int(next[current])
                        let home = bucket(hashes[place])
                        if home == current {
                            next[current] += 1
                        } else {
                            hashes.swapAt(place, Int(next[home]))
                            next[home] += 1
                        }
                    }
                    hashes[Int(starts[current])..<end].sort()
                }
            }
            self.shift = shift
            self.starts = starts
        }

        /// The first index of `hash` in `sorted` (the array this index was made of), if it is there.
        func index(of hash: UInt64, in sorted: [UInt64]) -> Int? {
            // A shift by 64 (one bucket) gives 0: Swift's `>>` does not wrap its count.
            let bucket = Int(hash >> shift)
            var (low, high) = (Int(starts[bucket]), Int(starts[bucket + 1]))
            while low < high {
                let middle = (low + high) / 2
                if sorted[middle] < hash { low = middle + 1 } else { high = middle }
            }
            return low < Int(starts[bucket + 1]) && sorted[low] == hash ? low : nil
        }
    }
}
