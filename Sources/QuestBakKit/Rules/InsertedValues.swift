import CoreDataStore
import Foundation
import GRDB
import QuestBakArchive

/// What a restore saw of the values it inserted into the entities' tables, so that a repair
/// rule's check, a query that reads every record of an entity (a `GROUP BY` of its cloudIDs, a
/// sort by its natural key, a count of a column's nulls), runs only where it could find
/// something. Each answer is "may" or "certainly not": a rule skips its check only on
/// "certainly not", and on "may" runs the very query it always ran, so a restore repairs exactly
/// what it repaired before (docs/performance.md, "Round three, import's checks").
///
/// The orphan rule's check of a to-one (an `EXISTS` per record) is answered exactly: the keys
/// inserted into each entity and the keys each to-one named are kept as sets of bits, and a
/// to-one can name nothing only where a key it named is no key inserted into its destination's
/// entities (or a key or a to-one's value was one these sets cannot hold: "may").
///
/// Sound because the inserts are the only way rows get into an entity's table before the rules
/// run (a table the archive carries as rows besides an entity's, or a row refused by a
/// constraint, makes every answer "may": `invalidate`), and because every change a rule or the
/// restore's link step makes to an entity's cloudID, natural key or required attribute is an
/// entry in the repair log (the restore's link step sets only link columns, which none of these
/// is): once the log has grown past `settle`'s count, every answer is "may" again.
final class InsertedValues {
    /// One entity's columns the checks look at, found once in its plan (values come as the plan's
    /// fields, then its to-ones).
    private struct Watch {
        /// The entity's table: a to-one's `EXISTS` looks for its key in its destination's table.
        var table = ""
        var requiredColumns: [(index: Int, column: String)] = []
        /// The cloudID attribute's value and column, when the entity has one.
        var cloudID: (index: Int, column: String)?
        var naturalKey = NaturalKey.none
    }

    private enum NaturalKey {
        /// The entity has none: nothing to note.
        case none
        /// A property of it has no column here: the entity's check is never skipped.
        case unobservable
        /// Its columns, with their affinity.
        case columns([(index: Int, affinity: ColumnAffinity)])
    }

    /// What the inserts of one entity showed.
    struct Seen: Equatable {
        var columnsWithNull: Set<String> = []
        /// A cloudID missing or not well-formed text (or more suspects than are kept).
        var cloudIDsMayNeedRepair = false
        /// A natural key SQLite may store otherwise than bound (or more suspects than are kept).
        var naturalKeysMayRepeat = false
        /// The cloudIDs, and the complete natural keys, the filter said it may have seen before:
        /// each value that came twice is among them (its second coming was flagged), with the
        /// filter's false alarms. One query of these few values tells which.
        var cloudIDSuspects: [StoredValue] = []
        var keySuspects: [[StoredValue]] = []
        /// The keys inserted (nil: one was outside what `KeyBits` holds).
        var primaryKeys: KeyBits? = KeyBits()
        /// By to-one, in the plan's order: the keys each named (nil: a value `KeyBits` cannot hold).
        var namedKeys: [KeyBits?] = []
    }

    /// Past this many suspects of an entity, its check runs as it always did.
    static let suspectLimit = 256

    private let naturalKeys: [String: [String]]
    private let affinities: [String: [String: ColumnAffinity]]
    /// Each entity's watch and what its inserts showed, by slot (`slot(of:)`).
    private var slots: [Int64: Int] = [:]
    private var watches: [Watch] = []
    /// By slot (the tests compare two ways of noting the same rows).
    private(set) var seen: [Seen] = []
    /// The last entity looked up: rows come member by member, so nearly every row's.
    private var lastSlot: (number: Int64, slot: Int)?
    private var cloudIDs: ProbableSet
    private var keys: ProbableSet
    private var valid = true
    /// The log's count when the inserts ended; nil until then.
    private var settledAt: Int?

    /// `naturalKeys`: each entity's natural key by property name (the app profile's; none for a
    /// store only its own model describes). `affinities`: each entity table's columns' affinities
    /// by upper-cased name. `expectedRecords` sizes the filters (the manifest's count).
    init(naturalKeys: [String: [String]], expectedRecords: Int, affinities: [String: [String: ColumnAffinity]]) {
        self.naturalKeys = naturalKeys
        self.affinities = affinities
        cloudIDs = ProbableSet(expectedCount: expectedRecords)
        keys = ProbableSet(expectedCount: naturalKeys.isEmpty ? 0 : expectedRecords)
    }

    /// Notes the values of one row about to be inserted into `plan`'s table under `primaryKey`
    /// (as the insert binds them: the plan's fields, then its to-ones).
    func observe(_ values: [StoredValue], primaryKey: Int64, plan: ModelLayout.EntityPlan) {
        note(values, primaryKey: primaryKey, plan: plan)
        flush()
    }

    /// What one row noted by `note` leaves for `flush`: its cloudID's hash and its natural key's,
    /// which the filters answer.
    private struct Pending {
        var slot: Int
        var values: [StoredValue]
        var cloudID: CloudIDNote
        var naturalKey: NaturalKeyNote
    }

    private enum CloudIDNote {
        /// The entity has no cloudID attribute.
        case none
        /// Missing, or not well-formed text.
        case malformed
        /// Well-formed text: its hash, and where the value is among the row's.
        case hash(UInt64, index: Int)
    }

    private enum NaturalKeyNote {
        case none
        case unobservable
        case hash(KeyHash, parts: [(index: Int, affinity: ColumnAffinity)])
    }

    /// Rows noted whose filters' answers `flush` has not taken yet, in their order.
    private var pending: [Pending] = []
    /// What `flush` read ahead of its answers, kept so that the reads are not left out.
    private var linesRead: UInt64 = 0

    /// `observe` in two steps, for a batch of rows: `note` each, in their order, then `flush`
    /// once. `note` does all of a row's work but asking the two filters, and `flush` asks them
    /// for every row noted, in the same order, with the same state between rows, so the notes
    /// end exactly as if each row had been observed on its own (the hashes depend on the row
    /// alone; what `flush` reads and writes, the filters, the suspects and the two flags, is
    /// read and written in the rows' order). Why: each answer is a cache line of a filter of
    /// up to 4 MB, a miss for nearly every row; asked one after another they are looked up
    /// together, where between two SQLite inserts each miss was waited for alone (docs/performance.md,
    /// "TimeQuest's import: the notes in batches").
    func note(_ values: [StoredValue], primaryKey: Int64, plan: ModelLayout.EntityPlan) {
        let slot = slot(of: plan)
        if seen[slot].primaryKeys?.insert(primaryKey) == false { seen[slot].primaryKeys = nil }
        for index in seen[slot].namedKeys.indices where seen[slot].namedKeys[index] != nil {
            switch values[plan.fields.count + index] {
            case .null: break
            // An INTEGER column keeps an integer as bound.
            case .integer(let key) where seen[slot].namedKeys[index]?.insert(key) == true: break
            default: seen[slot].namedKeys[index] = nil
            }
        }
        for (index, column) in watches[slot].requiredColumns where Self.isStoredAsNull(values[index]) {
            seen[slot].columnsWithNull.insert(column)
        }
        var cloudID = CloudIDNote.none
        if let (index, _) = watches[slot].cloudID {
            // Well-formed text is stored as bound whatever the column's affinity (it is no number).
            if case .text(let bytes) = values[index], DeterministicID.isWellFormed(bytes) {
                var hasher = StableHasher(seed: UInt64(bitPattern: plan.number))
                hasher.combine(bytes)
                cloudID = .hash(hasher.value, index: index)
            } else {
                cloudID = .malformed
            }
        }
        var naturalKey = NaturalKeyNote.none
        switch watches[slot].naturalKey {
        case .none: break
        case .unobservable: naturalKey = .unobservable
        case .columns(let key): naturalKey = .hash(Self.keyHash(values, key: key, entity: plan.number), parts: key)
        }
        if case .none = cloudID, case .none = naturalKey { return }
        pending.append(Pending(slot: slot, values: values, cloudID: cloudID, naturalKey: naturalKey))
    }

    /// The filters' answers for the rows `note` noted, in their order (see `note`).
    func flush() {
        // Each row's cache lines of the filters read first, one after another: no read waits for
        // the one before it, so their misses overlap, and the answers below find the lines in
        // the cache. Reading changes nothing (the sum is kept only so that the reads are made).
        var lines: UInt64 = 0
        for row in pending {
            if case .hash(let hash, _) = row.cloudID { lines &+= cloudIDs.firstWord(of: hash) }
            if case .hash(.hash(let hash), _) = row.naturalKey { lines &+= keys.firstWord(of: hash) }
        }
        linesRead &+= lines
        for row in pending {
            let slot = row.slot
            if !seen[slot].cloudIDsMayNeedRepair {
                switch row.cloudID {
                case .none: break
                case .malformed: seen[slot].cloudIDsMayNeedRepair = true
                case .hash(let hash, let index):
                    if cloudIDs.insert(hash) {
                        if seen[slot].cloudIDSuspects.count < Self.suspectLimit {
                            seen[slot].cloudIDSuspects.append(row.values[index])
                        } else {
                            seen[slot].cloudIDsMayNeedRepair = true
                        }
                    }
                }
            }
            guard !seen[slot].naturalKeysMayRepeat else { continue }
            switch row.naturalKey {
            case .none: break
            case .unobservable: seen[slot].naturalKeysMayRepeat = true
            case .hash(let hash, let key):
                switch hash {
                case .incomplete: break
                case .hash(let hash) where !keys.insert(hash): break
                case .hash where seen[slot].keySuspects.count < Self.suspectLimit:
                    seen[slot].keySuspects.append(key.map { row.values[$0.index] })
                case .hash, .mayBeStoredOtherwise: seen[slot].naturalKeysMayRepeat = true
                }
            }
        }
        pending.removeAll(keepingCapacity: true)
    }

    private func slot(of plan: ModelLayout.EntityPlan) -> Int {
        if let lastSlot, lastSlot.number == plan.number { return lastSlot.slot }
        let slot: Int
        if let known = slots[plan.number] {
            slot = known
        } else {
            slot = watches.count
            watches.append(makeWatch(plan))
            // A to-one's key is kept as bound only by an INTEGER column (Core Data's); any other
            // column's to-one is "may".
            let columns = affinities[plan.table] ?? [:]
            seen.append(Seen(namedKeys: plan.toOne.map { columns[$0.column.uppercased()] == .integer ? KeyBits() : nil }))
            slots[plan.number] = slot
        }
        lastSlot = (plan.number, slot)
        return slot
    }

    private enum KeyHash {
        /// A part is missing: a key with a missing part is never merged (`DuplicateRule`).
        case incomplete
        /// A part may be stored otherwise than bound (`isStoredAsBound`).
        case mayBeStoredOtherwise
        case hash(UInt64)
    }

    private static func keyHash(_ values: [StoredValue], key: [(index: Int, affinity: ColumnAffinity)], entity: Int64) -> KeyHash {
        var hasher = StableHasher(seed: UInt64(bitPattern: entity))
        var convertible = false
        for (index, affinity) in key {
            let value = values[index]
            if isStoredAsNull(value) { return .incomplete }
            if !isStoredAsBound(value, affinity: affinity) { convertible = true }
            hasher.combine(keyPart: value)
        }
        return convertible ? .mayBeStoredOtherwise : .hash(hasher.value)
    }

    /// Rows came into an entity's table some other way (or a row was refused): every answer is
    /// "may" from now on.
    func invalidate() { valid = false }

    /// The inserts are over: answers hold while the log has `loggedCount` entries.
    func settle(loggedCount: Int) {
        flush()
        settledAt = loggedCount
    }

    /// Whether `column` of `entity`'s records may hold a null.
    func mayHaveNull(in column: String, of plan: ModelLayout.EntityPlan, log: RepairLog) -> Bool {
        guard answers(log) else { return true }
        return slots[plan.number].map { seen[$0].columnsWithNull.contains(column) } ?? false
    }

    /// Whether one of the cloudIDs in `column` of `plan`'s records may be missing, malformed or
    /// repeated (a column other than the cloudID attribute's, which is the one noted: "may").
    /// The suspects the filter flagged are looked up in `rows` ("FROM … WHERE …", the entity's
    /// records) on `db`; without a `db`, suspects say "may".
    func cloudIDsMayNeedRepair(
        in column: String, of plan: ModelLayout.EntityPlan, log: RepairLog, db: Database?, rows: String
    ) throws
        -> Bool
    {
        guard answers(log) else { return true }
        // No row of the entity: nothing to repair. Else only the column noted is known.
        guard let slot = slots[plan.number] else { return false }
        guard watches[slot].cloudID?.column == column, !seen[slot].cloudIDsMayNeedRepair else { return true }
        return try Self.anyRepeated(seen[slot].cloudIDSuspects.map { [$0] }, columns: [column], rows: rows, db: db)
    }

    /// Whether two of `plan`'s records may have one complete natural key, stored in `columns`
    /// (its suspects looked up as `cloudIDsMayNeedRepair` looks up its own).
    func naturalKeysMayRepeat(
        of plan: ModelLayout.EntityPlan, columns: [String], log: RepairLog, db: Database?, rows: String
    ) throws -> Bool {
        guard answers(log) else { return true }
        guard let slot = slots[plan.number] else { return false }
        guard !seen[slot].naturalKeysMayRepeat else { return true }
        return try Self.anyRepeated(seen[slot].keySuspects, columns: columns, rows: rows, db: db)
    }

    /// Whether one of the `suspects` (values of `columns`, as bound) is held by two of the
    /// records `rows` selects: one pass over them, looking each up among the few suspects, where
    /// the check it stands for sorts them all. SQLite compares a column with a bound value as the
    /// check's `GROUP BY` compares two of them (the value was bound in the column's own class,
    /// `isStoredAsBound`; numbers by value, text and BLOBs byte for byte).
    static func anyRepeated(_ suspects: [[StoredValue]], columns: [String], rows: String, db: Database?) throws -> Bool {
        if suspects.isEmpty { return false }
        guard let db else { return true }
        let tuple = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
        let list = Array(repeating: tuple, count: suspects.count).joined(separator: ", ")
        let selected = columns.joined(separator: ", ")
        let sql = "SELECT 1 \(rows) AND (\(selected)) IN (VALUES \(list)) GROUP BY \(selected) HAVING count(*) > 1 LIMIT 1"
        return try !ExactSQL.fetchAll(db, sql: sql, suspects.flatMap { $0 }).isEmpty
    }

    /// Whether the to-one `relationship` (its index in `plan.toOne`) of one of `plan`'s records
    /// may name a key that no record of `destinations` (the entity numbers of its destination and
    /// of every entity under it) in `table` has: what `OrphanRule` looks for with `EXISTS`.
    func toOneMayNameNothing(
        _ relationship: Int, of plan: ModelLayout.EntityPlan, destinations: [Int64], table: String, log: RepairLog
    ) -> Bool {
        guard answers(log) else { return true }
        // No row of the entity: no to-one to look at.
        guard let slot = slots[plan.number] else { return false }
        guard let named = seen[slot].namedKeys[relationship] else { return true }
        var existing = KeyBits()
        for number in destinations {
            guard let destination = slots[number] else { continue }
            // Rows of another table are not where the `EXISTS` looks.
            guard watches[destination].table == table else { continue }
            guard let keys = seen[destination].primaryKeys else { return true }
            existing.formUnion(keys)
        }
        return !named.isSubset(of: existing)
    }

    private func answers(_ log: RepairLog) -> Bool {
        valid && settledAt == log.total
    }

    private func makeWatch(_ plan: ModelLayout.EntityPlan) -> Watch {
        var watch = Watch()
        watch.table = plan.table
        for (index, field) in plan.fields.enumerated() {
            if !field.isOptional { watch.requiredColumns.append((index, field.column)) }
            if field.path == [CompiledEntity.cloudIDAttribute] { watch.cloudID = (index, field.column) }
        }
        if let key = naturalKeys[plan.name], !key.isEmpty {
            let columns = affinities[plan.table] ?? [:]
            var parts: [(index: Int, affinity: ColumnAffinity)] = []
            for property in key {
                // Found as `RepairContext.column(_:of:)` finds it: an attribute, else a to-one.
                let index =
                    plan.fields.firstIndex { $0.path == [property] }
                    ?? plan.toOne.firstIndex { $0.name == property }.map { plan.fields.count + $0 }
                guard let index else { break }
                let column = index < plan.fields.count ? plan.fields[index].column : plan.toOne[index - plan.fields.count].column
                guard let affinity = columns[column.uppercased()] else { break }
                parts.append((index, affinity))
            }
            watch.naturalKey = parts.count == key.count ? .columns(parts) : .unobservable
        }
        return watch
    }

    /// SQLite stores a NaN as NULL.
    static func isStoredAsNull(_ value: StoredValue) -> Bool {
        switch value {
        case .null: return true
        case .real(let number): return number.isNaN
        default: return false
        }
    }

    /// Whether the column keeps the value's storage class (or, for a number in a numeric column,
    /// its value: an integral REAL may be stored as an INTEGER, which compares equal). Text in a
    /// numeric column and a number in a text column may be converted: such a key is not noted,
    /// and the entity's check runs.
    static func isStoredAsBound(_ value: StoredValue, affinity: ColumnAffinity) -> Bool {
        switch (value, affinity) {
        case (.blob, _): return true
        case (.text, .text), (.text, .blob): return true
        case (.integer, .integer), (.integer, .real), (.integer, .numeric), (.integer, .blob): return true
        case (.real, .integer), (.real, .real), (.real, .numeric), (.real, .blob): return true
        default: return false
        }
    }
}

/// A set of keys (`Z_PK`s) as bits: exact, and small for the dense keys Core Data hands out
/// (an eighth of a byte a key up to the largest). A key below 0 or from `limit` on is not held:
/// `insert` says false, and the caller's answer becomes "may".
struct KeyBits: Equatable {
    /// 2^24 keys: 2 MB at most, so memory stays flat whatever the keys.
    static let limit: Int64 = 1 << 24
    private var words: [UInt64] = []

    /// Adds `key`; false when it is outside what the set holds (nothing is added).
    mutating func insert(_ key: Int64) -> Bool {
        guard key >= 0, key < Self.limit else { return false }
        let word = Int(key >> 6)
        if word >= words.count {
            // Doubled as it grows (not word by word), up to the limit's words.
            let count = min(max(word + 1, 2 * words.count), Int(Self.limit >> 6))
            words.append(contentsOf: repeatElement(0, count: count - words.count))
        }
        words[word] |= 1 << UInt64(key & 63)
        return true
    }

    mutating func formUnion(_ other: KeyBits) {
        if other.words.count > words.count { words.append(contentsOf: repeatElement(0, count: other.words.count - words.count)) }
        for index in other.words.indices { words[index] |= other.words[index] }
    }

    func isSubset(of other: KeyBits) -> Bool {
        for index in words.indices where words[index] & ~(index < other.words.count ? other.words[index] : 0) != 0 { return false }
        return true
    }
}

/// A Bloom filter of 64-bit hashes: `insert` says whether the hash may have been inserted
/// before; false is certain. Blocked: a hash's bits all lie in one 512-bit block (one cache
/// line), so an insert costs one memory access, not one per probe. Its size is fixed when made
/// (64 bits per expected item, at most 4 MB), so memory does not grow with the store; past the
/// expected count it answers "may" more often, which costs time (the checks it would have
/// skipped), never a wrong answer.
struct ProbableSet {
    private var words: [UInt64]
    /// The number of blocks less one (a power of two less one).
    private let blockMask: UInt64
    private static let wordsPerBlock = 8
    private static let probes = 8

    init(expectedCount: Int) {
        var bits = 1 << 16
        while bits < expectedCount * 64 && bits < 1 << 25 { bits <<= 1 }
        words = [UInt64](repeating: 0, count: bits / 64)
        blockMask = UInt64(bits / 512 - 1)
    }

    /// Adds `hash`; returns whether it may have been added before.
    mutating func insert(_ hash: UInt64) -> Bool {
        let block = Int(truncatingIfNeeded: (hash >> 32) & blockMask) * Self.wordsPerBlock
        // Each probe takes 9 bits of a second hash: a word of the block and a bit of it.
        var bits = StableHasher.mix(hash)
        var present = true
        words.withUnsafeMutableBufferPointer { words in
            for _ in 0..<Self.probes {
                let word = block + Int(truncatingIfNeeded: bits & 7)
                let flag: UInt64 = 1 << ((bits >> 3) & 63)
                if words[word] & flag == 0 {
                    present = false
                    words[word] |= flag
                }
                bits >>= 9
            }
        }
        return present
    }

    /// The first word of `hash`'s block: reading it brings the block's cache line in before
    /// `insert` asks it (`InsertedValues.flush`).
    func firstWord(of hash: UInt64) -> UInt64 {
        words[Int(truncatingIfNeeded: (hash >> 32) & blockMask) * Self.wordsPerBlock]
    }

    /// Whether `hash` may have been added (false is certain), adding nothing: for asking of
    /// one set's values whether another's holds them, without the asked values filling it.
    func contains(_ hash: UInt64) -> Bool {
        let block = Int(truncatingIfNeeded: (hash >> 32) & blockMask) * Self.wordsPerBlock
        var bits = StableHasher.mix(hash)
        for _ in 0..<Self.probes {
            guard words[block + Int(truncatingIfNeeded: bits & 7)] & (1 << ((bits >> 3) & 63)) != 0 else { return false }
            bits >>= 9
        }
        return true
    }
}

/// A 64-bit hash of bytes and stored values that is the same in every run (Swift's `Hasher` is
/// seeded per process), so which checks a restore skips does not vary from run to run.
struct StableHasher {
    private(set) var value: UInt64

    init(seed: UInt64) { value = Self.mix(seed &+ 0x2545_F491_4F6C_DD1D) }

    mutating func combine(_ bytes: Data) {
        combine(word: bytes.withUnsafeBytes { Self.fnv1a($0) } ^ UInt64(bytes.count))
    }

    /// FNV-1a of `bytes`: a few operations a byte, the same in every run.
    static func fnv1a(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var state: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes { state = (state ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return state
    }

    /// One part of a natural key: equal, as SQLite compares them, gives equal hashes. Numbers
    /// hash by value (an INTEGER equals a REAL of the same value; -0.0 equals 0.0), text and BLOBs
    /// by their bytes and class.
    mutating func combine(keyPart value: StoredValue) {
        switch value {
        case .null: combine(word: 0)
        case .integer(let number): combine(number: Double(number))
        case .real(let number): combine(number: number)
        case .text(let bytes):
            combine(word: 2)
            combine(bytes)
        case .blob(let bytes):
            combine(word: 3)
            combine(bytes)
        }
    }

    private mutating func combine(number: Double) {
        combine(word: 1)
        combine(word: number == 0 ? 0 : number.bitPattern)
    }

    mutating func combine(word: UInt64) { value = Self.mix(value ^ word) }

    /// splitmix64's finalizer.
    static func mix(_ input: UInt64) -> UInt64 {
        var z = input &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
