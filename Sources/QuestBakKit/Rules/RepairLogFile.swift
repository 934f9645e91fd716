import CoreDataStore
import Foundation

/// The repair log's entries on disk: a file of its own, appended to a batch at a time and read
/// from the start, each entry's values kept as the values they are (`ReportValueBytes`), not as
/// their JSON. The JSON is made when the log is read, by the one codec (`ReportValue.json`,
/// `ValueJSON`), so a merge whose report nobody reads (`-q` without `--report`) never makes it.
///
/// It was a SQLite file (one row per entry): a merge into a second device logs half a million
/// entries, and the inserts, their binding, the pages written at each commit and each value's
/// JSON cost a third of a core (docs/performance.md, "the report's entries as stored"). Its
/// readers never asked SQLite for more than a pass in the order recorded: `keys` and
/// `resolveCloudIDs` filtered every entry, and `resolveCloudIDs`' index only served its updates,
/// which here rewrite the file instead.
///
/// Used by one thread at a time: the log's writer queue while it writes a batch, the log's owner
/// once it has waited for that write (`RepairLog.finishWrites`).
final class RepairLogFile: @unchecked Sendable {
    private let url: URL
    private var handle: FileHandle
    /// The entities of the entries written (a superset: entities of `dedup` entries too), so that
    /// `resolveCloudIDs` leaves the file alone for an entity it holds no entry of.
    private(set) var entities: Set<String> = []
    /// A batch's bytes, the buffer kept from one batch to the next.
    private var buffer: [UInt8] = []

    init(url: URL) throws {
        self.url = url
        try Data().write(to: url)
        handle = try FileHandle(forWritingTo: url)
    }

    deinit { try? handle.close() }

    /// Appends a batch of entries after those written before.
    func append(_ entries: [RepairEntry]) throws {
        guard !entries.isEmpty else { return }
        buffer.removeAll(keepingCapacity: true)
        Self.encode(entries, to: &buffer, entities: &entities)
        try handle.write(contentsOf: buffer)
    }

    /// Forgets every entry.
    func removeAll() throws {
        try handle.truncate(atOffset: 0)
        entities = []
    }

    /// Every entry in the order written, a batch at a time (each batch as it was appended);
    /// `body` returns false to stop. The batch's array and the bytes it is read from are kept
    /// from one batch to the next (`body` may change the batch in place: `rewrite` does), so a
    /// pass over the log takes their memory once.
    func forEachBatch(_ body: (inout [RepairEntry]) throws -> Bool) throws {
        let reader = try FileHandle(forReadingFrom: url)
        defer { try? reader.close() }
        var remaining = try reader.seekToEnd()
        try reader.seek(toOffset: 0)
        var bytes: [UInt8] = []
        var batch: [RepairEntry] = []
        while remaining > 0 {
            guard remaining >= Self.headerSize else { throw RepairLogFileDamaged(url: url) }
            try readBytes(Self.headerSize, from: reader, into: &bytes)
            var header = ByteReader(bytes)
            let length = try header.integer(UInt64.self)
            let count = try header.integer(UInt32.self)
            remaining -= UInt64(Self.headerSize)
            // A damaged length must not ask for more memory than the file holds.
            guard length <= remaining else { throw RepairLogFileDamaged(url: url) }
            remaining -= length
            try readBytes(Int(length), from: reader, into: &bytes)
            batch.removeAll(keepingCapacity: true)
            do {
                var entries = ByteReader(bytes)
                var previous: RepairEntry?
                for _ in 0..<count {
                    let entry = try Self.decodeEntry(from: &entries, previous: previous)
                    batch.append(entry)
                    previous = entry
                }
                guard entries.isAtEnd else { throw ByteReader.Overrun() }
            } catch is ByteReader.Overrun {
                throw RepairLogFileDamaged(url: url)
            }
            guard try body(&batch) else { return }
        }
    }

    /// Every entry in the order written; `body` returns false to stop.
    func forEachEntry(_ body: (RepairEntry) throws -> Bool) throws {
        try forEachBatch { batch in
            for entry in batch {
                guard try body(entry) else { return false }
            }
            return true
        }
    }

    /// Writes every entry again, each changed by `change`, into a new file that then takes this
    /// one's place: what `change` throws leaves the entries as they were (the new file is
    /// removed), as the SQLite file's rolled-back transaction did.
    func rewrite(_ change: (inout RepairEntry) throws -> Void) throws {
        let rewritten = url.appendingPathExtension("rewritten")
        var output: FileHandle?
        do {
            try Data().write(to: rewritten)
            let writing = try FileHandle(forWritingTo: rewritten)
            output = writing
            var entities: Set<String> = []
            var bytes: [UInt8] = []
            try forEachBatch { batch in
                for index in batch.indices { try change(&batch[index]) }
                bytes.removeAll(keepingCapacity: true)
                Self.encode(batch, to: &bytes, entities: &entities)
                try writing.write(contentsOf: bytes)
                return true
            }
            output = nil
            try writing.close()
            // The old file's handle stays open (and the file in use) until the new one is in place.
            guard rename(rewritten.path, url.path) == 0 else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
            }
            try? handle.close()
            handle = try FileHandle(forWritingTo: url)
            try handle.seekToEnd()
            self.entities = entities
        } catch {
            try? output?.close()
            try? FileManager.default.removeItem(at: rewritten)
            throw error
        }
    }

    // MARK: The file's form

    /// A batch: its entries' byte count (UInt64) and their number (UInt32), little-endian, then
    /// the entries.
    private static let headerSize = 12

    /// An entry: its rule and kind (their places in `allCases`, a byte each), its entity, its
    /// `Z_PK` (8 bytes), its cloudID and field (texts), its old and new value (`ReportValueBytes`).
    /// A text is a byte (0: none; 1: the entry before's in the same batch, as a merge logs several
    /// entries per record; 2: its UTF-8 follows, its length first as 4 bytes) cut at its first
    /// NUL, as the log has always given its texts back (its readers read C strings).
    private static func encode(_ entries: [RepairEntry], to bytes: inout [UInt8], entities: inout Set<String>) {
        // Written as batches of at most `entriesPerBatch`, whatever the log hands over at once:
        // a reader holds one batch at a time, entries and bytes.
        for start in stride(from: entries.startIndex, to: entries.endIndex, by: entriesPerBatch) {
            encodeBatch(entries[start..<min(start + entriesPerBatch, entries.endIndex)], to: &bytes, entities: &entities)
        }
    }

    /// Entries per batch of the file: a migration's `resolveCloudIDs` reads the log once per
    /// entity, and batches of the 10,000 entries the log hands its writer at once took it 5 MB
    /// above the SQLite log's peak memory at 100k records.
    private static let entriesPerBatch = 1_000

    private static func encodeBatch(_ entries: ArraySlice<RepairEntry>, to bytes: inout [UInt8], entities: inout Set<String>) {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: headerSize))
        // Rule and kind by the entry before's codes where they are the same (a merge's entries
        // come in runs), not looked up in the two maps for each entry.
        var rule = (entries.first?.rule, UInt8(0))
        var kind = (entries.first?.kind, UInt8(0))
        if let first = entries.first {
            rule.1 = ruleCodes[first.rule] ?? 0
            kind.1 = kindCodes[first.kind] ?? 0
        }
        // By index: each entry is compared with the one before where they lie, not copied.
        for index in entries.indices {
            // The first entry of a batch names its texts whole: a batch reads alone.
            let isFirst = index == entries.startIndex
            let previous = isFirst ? index : index - 1
            if entries[index].rule != rule.0 { rule = (entries[index].rule, ruleCodes[entries[index].rule] ?? 0) }
            if entries[index].kind != kind.0 { kind = (entries[index].kind, kindCodes[entries[index].kind] ?? 0) }
            bytes.append(rule.1)
            bytes.append(kind.1)
            let sameEntity = !isFirst && entries[index].entity == entries[previous].entity
            if !sameEntity { entities.insert(entries[index].entity) }
            appendText(entries[index].entity, same: sameEntity, to: &bytes)
            bytes.append(littleEndian: entries[index].primaryKey)
            appendText(entries[index].cloudID, same: !isFirst && entries[index].cloudID == entries[previous].cloudID, to: &bytes)
            appendText(entries[index].field, same: !isFirst && entries[index].field == entries[previous].field, to: &bytes)
            ReportValueBytes.append(entries[index].old, to: &bytes)
            ReportValueBytes.append(entries[index].new, to: &bytes)
        }
        let length = UInt64(bytes.count - start - headerSize)
        bytes.withUnsafeMutableBytes { header in
            header.storeBytes(of: length.littleEndian, toByteOffset: start, as: UInt64.self)
            header.storeBytes(of: UInt32(entries.count).littleEndian, toByteOffset: start + 8, as: UInt32.self)
        }
    }

    private static func appendText(_ text: String?, same: Bool, to bytes: inout [UInt8]) {
        guard var text else { return bytes.append(0) }
        if same { return bytes.append(1) }
        bytes.append(2)
        // Through the contiguous bytes: searched and copied by the view, a text cost a third of
        // the SQLite log's own time.
        text.withUTF8 { utf8 in
            let kept = UnsafeBufferPointer(rebasing: utf8[..<(utf8.firstIndex(of: 0) ?? utf8.endIndex)])
            bytes.append(littleEndian: UInt32(kept.count))
            bytes.append(contentsOf: kept)
        }
    }

    private static func decodeEntry(from reader: inout ByteReader, previous: RepairEntry?) throws -> RepairEntry {
        let rule = Int(try reader.byte())
        let kind = Int(try reader.byte())
        guard RepairEntry.Rule.allCases.indices.contains(rule), RepairEntry.Kind.allCases.indices.contains(kind) else {
            throw ByteReader.Overrun()
        }
        func text(_ before: String??) throws -> String? {
            switch try reader.byte() {
            case 0: return nil
            case 1:
                guard let before else { throw ByteReader.Overrun() }
                return before
            case 2: return try reader.text()
            default: throw ByteReader.Overrun()
            }
        }
        guard let entity = try text(previous.map { .some($0.entity) }) else { throw ByteReader.Overrun() }
        let primaryKey = try reader.integer(Int64.self)
        let cloudID = try text(previous.map(\.cloudID))
        let field = try text(previous.map(\.field))
        return RepairEntry(
            rule: RepairEntry.Rule.allCases[rule], kind: RepairEntry.Kind.allCases[kind], entity: entity, primaryKey: primaryKey,
            cloudID: cloudID, field: field, old: try ReportValueBytes.read(from: &reader), new: try ReportValueBytes.read(from: &reader))
    }

    /// A rule and a kind are kept as their place in `allCases`.
    private static let ruleCodes = Dictionary(uniqueKeysWithValues: RepairEntry.Rule.allCases.enumerated().map { ($1, UInt8($0)) })
    private static let kindCodes = Dictionary(uniqueKeysWithValues: RepairEntry.Kind.allCases.enumerated().map { ($1, UInt8($0)) })

    /// The file's next `count` bytes, into `bytes` (whose memory is kept); fewer at its end is
    /// a damaged file.
    private func readBytes(_ count: Int, from handle: FileHandle, into bytes: inout [UInt8]) throws {
        bytes.removeAll(keepingCapacity: true)
        bytes.append(contentsOf: repeatElement(0, count: count))
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress! + done, count - done) }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else {
                throw got < 0 ? CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: url.path]) : RepairLogFileDamaged(url: url)
            }
            done += got
        }
    }
}

/// The log's file is not as the log wrote it.
struct RepairLogFileDamaged: Error, CustomStringConvertible {
    var url: URL
    var description: String { "the repair log \(url.path) is damaged: it ends inside an entry or holds one the log cannot have written" }
}

/// A report value in a binary form: the value's case (a byte), then what it holds as the `Value`
/// holds it (integers and a Double's bits as 8 bytes, texts and bytes as their length in 4 bytes
/// and themselves, a UUID's 16 bytes), so that it reads back as the very value (`==`) whose JSON
/// the codec then writes. Nothing here spells a value: that is `ValueJSON`'s alone.
enum ReportValueBytes {
    private enum Tag: UInt8 {
        case absent, null, integer, falseBoolean, trueBoolean, double, string, textBytes, date, integerDate, uuid, binary
        case integerArray, stringArray, decimal, record
    }

    static func append(_ value: ReportValue?, to bytes: inout [UInt8]) {
        switch value {
        case nil: bytes.append(Tag.absent.rawValue)
        case .value(let one)?: append(one, to: &bytes)
        case .record(let values)?:
            bytes.append(Tag.record.rawValue)
            bytes.append(littleEndian: UInt32(values.count))
            for (name, one) in values {
                appendText(name, to: &bytes)
                append(one, to: &bytes)
            }
        }
    }

    private static func append(_ value: Value, to bytes: inout [UInt8]) {
        switch value {
        case .null: bytes.append(Tag.null.rawValue)
        case .integer(let number):
            bytes.append(Tag.integer.rawValue)
            bytes.append(littleEndian: number)
        case .boolean(let flag): bytes.append((flag ? Tag.trueBoolean : Tag.falseBoolean).rawValue)
        case .double(let number):
            bytes.append(Tag.double.rawValue)
            bytes.append(littleEndian: number.bitPattern)
        case .string(let text):
            bytes.append(Tag.string.rawValue)
            appendText(text, to: &bytes)
        case .textBytes(let data):
            bytes.append(Tag.textBytes.rawValue)
            appendBytes(data, to: &bytes)
        case .date(let seconds):
            bytes.append(Tag.date.rawValue)
            bytes.append(littleEndian: seconds.bitPattern)
        case .integerDate(let seconds):
            bytes.append(Tag.integerDate.rawValue)
            bytes.append(littleEndian: seconds)
        case .uuid(let uuid):
            bytes.append(Tag.uuid.rawValue)
            withUnsafeBytes(of: uuid.uuid) { bytes.append(contentsOf: $0) }
        case .binary(let data):
            bytes.append(Tag.binary.rawValue)
            appendBytes(data, to: &bytes)
        case .integerArray(let numbers):
            bytes.append(Tag.integerArray.rawValue)
            bytes.append(littleEndian: UInt32(numbers.count))
            for number in numbers { bytes.append(littleEndian: number) }
        case .stringArray(let texts):
            bytes.append(Tag.stringArray.rawValue)
            bytes.append(littleEndian: UInt32(texts.count))
            for text in texts { appendText(text, to: &bytes) }
        case .decimal(let text):
            bytes.append(Tag.decimal.rawValue)
            appendText(text, to: &bytes)
        }
    }

    /// A text whole (a value's text keeps its NULs: the codec escapes them).
    private static func appendText(_ text: String, to bytes: inout [UInt8]) {
        var text = text
        text.withUTF8 { utf8 in
            bytes.append(littleEndian: UInt32(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    private static func appendBytes(_ data: Data, to bytes: inout [UInt8]) {
        bytes.append(littleEndian: UInt32(data.count))
        bytes.append(contentsOf: data)
    }

    static func read(from reader: inout ByteReader) throws -> ReportValue? {
        guard let tag = Tag(rawValue: try reader.byte()) else { throw ByteReader.Overrun() }
        switch tag {
        case .absent: return nil
        case .record:
            var values: [String: Value] = [:]
            for _ in 0..<(try reader.count(ofAtLeast: 5)) {
                let name = try reader.text()
                guard let one = try read(from: &reader), case .value(let value) = one else { throw ByteReader.Overrun() }
                values[name] = value
            }
            return .record(values)
        default: return .value(try value(tag, from: &reader))
        }
    }

    private static func value(_ tag: Tag, from reader: inout ByteReader) throws -> Value {
        switch tag {
        case .absent, .record: throw ByteReader.Overrun()
        case .null: return .null
        case .integer: return .integer(try reader.integer(Int64.self))
        case .falseBoolean: return .boolean(false)
        case .trueBoolean: return .boolean(true)
        case .double: return .double(Double(bitPattern: try reader.integer(UInt64.self)))
        case .string: return .string(try reader.text())
        case .textBytes: return .textBytes(Data(try reader.bytes(Int(try reader.integer(UInt32.self)))))
        case .date: return .date(Double(bitPattern: try reader.integer(UInt64.self)))
        case .integerDate: return .integerDate(try reader.integer(Int64.self))
        case .uuid: return .uuid(try reader.bytes(16).withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) })
        case .binary: return .binary(Data(try reader.bytes(Int(try reader.integer(UInt32.self)))))
        case .integerArray:
            var numbers: [Int64] = []
            for _ in 0..<(try reader.count(ofAtLeast: 8)) { numbers.append(try reader.integer(Int64.self)) }
            return .integerArray(numbers)
        case .stringArray:
            var texts: [String] = []
            for _ in 0..<(try reader.count(ofAtLeast: 4)) { texts.append(try reader.text()) }
            return .stringArray(texts)
        case .decimal: return .decimal(try reader.text())
        }
    }
}

/// Reads the log file's bytes in order; anything past their end throws.
struct ByteReader {
    /// Past the end, or bytes no writer of the log writes: the file is damaged.
    struct Overrun: Error {}

    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { position == bytes.count }

    mutating func byte() throws -> UInt8 {
        guard position < bytes.count else { throw Overrun() }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func integer<Integer: FixedWidthInteger>(_: Integer.Type) throws -> Integer {
        let size = MemoryLayout<Integer>.size
        guard bytes.count - position >= size else { throw Overrun() }
        defer { position += size }
        return Integer(littleEndian: bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: position, as: Integer.self) })
    }

    mutating func bytes(_ count: Int) throws -> ArraySlice<UInt8> {
        guard count >= 0, bytes.count - position >= count else { throw Overrun() }
        defer { position += count }
        return bytes[position..<position + count]
    }

    /// A count of elements (4 bytes), each of at least `size` bytes: refused if the bytes left
    /// cannot hold them.
    mutating func count(ofAtLeast size: Int) throws -> Int {
        let count = Int(try integer(UInt32.self))
        guard count <= (bytes.count - position) / size else { throw Overrun() }
        return count
    }

    /// A text: its length in 4 bytes, then its UTF-8 (as written from a `String`: valid).
    mutating func text() throws -> String {
        String(decoding: try bytes(Int(try integer(UInt32.self))), as: UTF8.self)
    }
}
