import CoreDataStore
import Foundation
import GRDB

/// Entity members of a store described by its own model (`source.schema` `"model"`,
/// docs/archive-format.md): one member per entity, sub-entities included, each record under its
/// property names with the model's types: a composite as a nested object, to-one relationships
/// as the target's `_pk`, to-many relationships that have no foreign key on the other side
/// (many-to-many, or without an inverse) as the ascending `_pk`s of their targets.
///
/// Export writes these bytes; a restore reads them back into the same columns, and proves what it
/// wrote by encoding the new store again and comparing digests.
package enum ModelMemberEncoding {
    /// The bytes written before each field's value, and after the last one: keys, and the braces
    /// that open and close composites.
    private struct Template {
        var beforeField: [[UInt8]] = []
        var afterFields: [UInt8] = []

        init(_ fields: [ModelLayout.Field]) {
            var open: [String] = []  // the composite path currently open
            for field in fields {
                let parents = Array(field.path.dropLast())
                var common = 0
                while common < open.count, common < parents.count, open[common] == parents[common] { common += 1 }
                var bytes: [UInt8] = Array(repeating: UInt8(ascii: "}"), count: open.count - common)
                // A key that opens a level right after `{` needs no comma; every other key does.
                var justOpened = false
                for level in common..<parents.count {
                    if !justOpened { bytes.append(UInt8(ascii: ",")) }
                    ValueJSON.appendString(parents[level], to: &bytes)
                    bytes.append(contentsOf: ":{".utf8)
                    justOpened = true
                }
                if !justOpened { bytes.append(UInt8(ascii: ",")) }
                ValueJSON.appendString(field.path.last ?? "", to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                beforeField.append(bytes)
                open = parents
            }
            afterFields = Array(repeating: UInt8(ascii: "}"), count: open.count)
        }
    }

    static func key(_ name: String) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: ",")]
        ValueJSON.appendString(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        return bytes
    }

    /// The statement that lists one record's targets of a to-many, ascending.
    static func targetsSQL(_ link: ModelLayout.ToMany) -> String {
        switch link.storage {
        case .destinationColumn(let table, let column):
            return "SELECT \(CoreDataSQL.keyColumn) FROM \(table) WHERE \(column) = ? ORDER BY \(CoreDataSQL.keyColumn)"
        case .joinTable(let table, let source, let destination):
            return "SELECT \(destination) FROM \(table) WHERE \(source) = ? ORDER BY \(destination)"
        }
    }

    /// Streams the member of `plan`'s entity through `write`; returns the number of records.
    /// With `readers` (other connections to the same file, which nothing writes meanwhile), a
    /// large entity's rows are encoded in ranges of keys on their threads at once; `write` is
    /// still called on this thread, line by line in key order, with the same bytes.
    /// `tableIsTheEntitys`: every row of `plan.table` is a record of `plan`'s entity (checked:
    /// `ModelLayout.tablesOfOneEntity`), so the ranges are cut without a pass over its keys.
    package static func encode(
        _ db: Database, plan: ModelLayout.EntityPlan, schemaVersion: String, path: String,
        progress: ((_ done: Int, _ total: Int) -> Void)? = nil, readers: KeyRangeReaders? = nil, tableIsTheEntitys: Bool = false,
        write: ([UInt8]) throws -> Void
    ) throws -> Int {
        let rows = RowEncoder(plan: plan, path: path)
        var done = 0
        func written(_ line: [UInt8], of total: Int) throws {
            try write(line)
            done += 1
            if done % 10_000 == 0 { progress?(done, total) }
        }
        // In ranges only where `Z_PK` is the rowid; their first keys come from the pass that counts.
        var ranges: (readers: KeyRangeReaders, starts: [Int64])?
        let total: Int
        if let readers, !readers.connections.isEmpty, try KeyRangeReaders.isKeyedByRowid(db, table: plan.table) {
            let (starts, count) =
                try (tableIsTheEntitys ? readers.rangeStarts(db, everyKeyOf: plan.table) : nil)
                ?? readers.rangeStarts(db, keysSQL: rows.keysSQL)
            ranges = (readers, starts)
            total = count
        } else {
            total = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(plan.table) WHERE \(CoreDataSQL.entityColumn) = \(plan.number)") ?? 0
        }
        try write(EntityHeader(schemaVersion: schemaVersion, entity: plan.name, count: total).line())
        if let (readers, starts) = ranges, starts.count > 1 {
            let limit = readers.bytesPerRange
            var line: [UInt8] = []
            line.reserveCapacity(512)
            try readers.run(
                count: starts.count,
                produce: { db, index in
                    let below = index + 1 < starts.count ? starts[index + 1] : nil
                    var part = RangePart(below: below)
                    // Room for the lines up to the cut, so the buffer is not doubled past it.
                    part.bytes.reserveCapacity(limit + 64 << 10)
                    part.resumeAfter = try rows.encode(db, from: starts[index], below: below, stopAfterBytes: limit) { line in
                        part.bytes.append(contentsOf: line)
                        part.lineEnds.append(part.bytes.count)
                    }
                    return part
                },
                consume: { part in
                    // One buffer for every line handed over: a new array per line was an
                    // allocation and a free per record on the writer's thread.
                    var start = 0
                    for end in part.lineEnds {
                        line.removeAll(keepingCapacity: true)
                        line.append(contentsOf: part.bytes[start..<end])
                        try written(line, of: total)
                        start = end
                    }
                    // A range cut short for its size: the rest of it, here, before the next range.
                    if let last = part.resumeAfter, last < Int64.max {
                        _ = try rows.encode(db, from: last + 1, below: part.below, stopAfterBytes: nil) { try written($0, of: total) }
                    }
                })
        } else {
            _ = try rows.encode(db, from: nil, below: nil, stopAfterBytes: nil) { try written($0, of: total) }
        }
        progress?(done, total)
        return done
    }

    /// The lines of one range of keys, made on a reader's thread: one buffer and where each line
    /// ends in it (a buffer per line would be thousands of allocations freed on another thread).
    private struct RangePart: Sendable {
        var below: Int64?
        var bytes: [UInt8] = []
        var lineEnds: [Int] = []
        /// The key of the last line when the range was cut for its size.
        var resumeAfter: Int64?
    }

    /// Turns the rows of one entity into record lines: the one codec of a record, whichever
    /// thread and range reads them.
    private struct RowEncoder: Sendable {
        let plan: ModelLayout.EntityPlan
        let path: String
        /// Every key's bytes one after another (`Template`'s before each field, then the braces
        /// after the fields, then each to-one's and each to-many's key), and where each is in
        /// them. A row reads them through one pointer, and each field's kind from an array of
        /// kinds: taking the template's arrays, or a field out of `plan.fields`, retained and
        /// released them (a field holds its path, column and default) for every field of every row.
        let keyBytes: [UInt8]
        let fieldKeys: [Range<Int>]
        let afterFields: Range<Int>
        let toOneKeys: [Range<Int>]
        let toManyKeys: [Range<Int>]
        let kinds: [AttributeKind]
        let selectSQL: String
        let keysSQL: String
        let prefix = Array("{\"\(RecordJSON.primaryKeyKey)\":".utf8)
        let optKey = Array(",\"\(RecordJSON.optKey)\":".utf8)

        init(plan: ModelLayout.EntityPlan, path: String) {
            self.plan = plan
            self.path = path
            let template = Template(plan.fields)
            var keyBytes: [UInt8] = []
            func place(_ key: [UInt8]) -> Range<Int> {
                keyBytes.append(contentsOf: key)
                return keyBytes.count - key.count..<keyBytes.count
            }
            fieldKeys = template.beforeField.map(place)
            afterFields = place(template.afterFields)
            toOneKeys = plan.toOne.map { place(key($0.name)) }
            toManyKeys = plan.toMany.map { place(key($0.name)) }
            self.keyBytes = keyBytes
            kinds = plan.fields.map(\.kind)
            let columns = [CoreDataSQL.keyColumn, CoreDataSQL.optColumn] + plan.fields.map(\.column) + plan.toOne.map(\.column)
            selectSQL = "SELECT \(columns.joined(separator: ", ")) FROM \(plan.table) WHERE \(CoreDataSQL.entityColumn) = \(plan.number)"
            keysSQL =
                "SELECT \(CoreDataSQL.keyColumn) FROM \(plan.table) WHERE \(CoreDataSQL.entityColumn) = \(plan.number) ORDER BY \(CoreDataSQL.keyColumn)"
        }

        /// Whether every byte is ASCII, so that the bytes are valid UTF-8 and a `String` of them has them.
        static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            var any: UInt8 = 0
            for byte in bytes { any |= byte }
            return any < 0x80
        }

        /// Whether an integer attribute of `kind` holds `number`, as `ValueCoding.decode` checks it.
        static func holds(_ kind: AttributeKind, _ number: Int64) -> Bool {
            switch kind {
            case .integer16: return Int16(exactly: number) != nil
            case .integer32: return Int32(exactly: number) != nil
            default: return true
            }
        }

        private func undecodable(_ primaryKey: Int64, _ property: String, _ reason: String) -> StoreError {
            StoreError.undecodableValue(path: path, entity: plan.name, primaryKey: primaryKey, property: property, reason: reason)
        }

        /// Passes the line of every row with a key from `from` up to, not including, `below`
        /// (nil: no bound), ascending, to `emit`. With `stopAfterBytes`, stops after the line
        /// that passes that many bytes and returns its key (nil when every row was passed).
        func encode(
            _ db: Database, from: Int64?, below: Int64?, stopAfterBytes: Int?, emit: ([UInt8]) throws -> Void
        ) throws -> Int64? {
            var sql = selectSQL
            var arguments: [StoredValue] = []
            if let from {
                sql += " AND \(CoreDataSQL.keyColumn) >= ?"
                arguments.append(.integer(from))
            }
            if let below {
                sql += " AND \(CoreDataSQL.keyColumn) < ?"
                arguments.append(.integer(below))
            }
            sql += " ORDER BY \(CoreDataSQL.keyColumn)"
            let toManyStatements = try plan.toMany.map { try db.cachedStatement(sql: targetsSQL($0)) }
            var line: [UInt8] = []
            line.reserveCapacity(512)
            var bytes = 0
            var cutAfter: Int64?
            // The keys where no row's closure retains them, nor nests a closure that writes `line`
            // (a nested function that appended to it made Swift check exclusive access at run
            // time on every append: 7% of the CPU of a 1M-row export).
            let keys = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: keyBytes.count)
            _ = keys.initialize(from: keyBytes)
            defer { keys.deallocate() }
            do {
                try ExactSQL.forEachRow(try db.cachedStatement(sql: sql), arguments) { row in
                    guard let primaryKey = row.integer(0) else {
                        throw undecodable(0, CoreDataSQL.keyColumn, "\(row[0].summary) is not an integer key")
                    }
                    line.removeAll(keepingCapacity: true)
                    line.append(contentsOf: prefix)
                    ASCIISpelling.appendInteger(primaryKey, to: &line)
                    line.append(contentsOf: optKey)
                    switch row[1] {
                    case .null: line.append(contentsOf: "null".utf8)
                    case .integer(let opt): ASCIISpelling.appendInteger(opt, to: &line)
                    case let other: throw undecodable(primaryKey, CoreDataSQL.optColumn, "\(other.summary) is not an integer")
                    }
                    for index in kinds.indices {
                        line.append(contentsOf: UnsafeBufferPointer(rebasing: keys[fieldKeys[index]]))
                        // The commonest values go from SQLite's buffer into the line, written as
                        // `ValueJSON` writes the `Value` that `ValueCoding.decode` makes of them,
                        // without that value: ASCII text of a string or URI attribute (decode
                        // would make a `Data` and a validated `String` of it, for bytes that are
                        // all ASCII the same bytes), a BLOB of a binary or transformable
                        // attribute (a `Data`, then its base64 as a `String`), a UUID's 16
                        // bytes, an integer its type holds, a boolean's 0 or 1. Any other value
                        // (NULL, another storage class, non-ASCII text, an integer out of range,
                        // a UUID of another length) takes the one path below, which writes it or
                        // refuses it with its reason.
                        let column = 2 + index
                        switch kinds[index] {
                        case .string, .uri:
                            let written =
                                row.withText(column) { text in
                                    let bytes = text.assumingMemoryBound(to: UInt8.self)
                                    guard Self.isASCII(bytes) else { return false }
                                    ValueJSON.appendString(utf8: bytes, to: &line)
                                    return true
                                } ?? false
                            if written { continue }
                        case .binary, .transformable:
                            if row.withBlob(column, { ValueJSON.appendBase64String($0, to: &line) }) != nil { continue }
                        case .uuid:
                            let written =
                                row.withBlob(column) { bytes in
                                    guard bytes.count == 16 else { return false }
                                    ValueJSON.appendUUIDString(bytes, to: &line)
                                    return true
                                } ?? false
                            if written { continue }
                        case .integer, .integer16, .integer32:
                            if let number = row.integer(column), Self.holds(kinds[index], number) {
                                ASCIISpelling.appendInteger(number, to: &line)
                                continue
                            }
                        case .boolean:
                            if let number = row.integer(column), number == 0 || number == 1 {
                                line.append(contentsOf: (number == 1 ? "true" : "false").utf8)
                                continue
                            }
                        default: break
                        }
                        do {
                            ValueJSON.append(try ValueCoding.decode(row[column], as: kinds[index]), to: &line)
                        } catch let failure as ValueCoding.Failure {
                            throw undecodable(primaryKey, plan.fields[index].path.joined(separator: "."), failure.reason)
                        }
                    }
                    line.append(contentsOf: UnsafeBufferPointer(rebasing: keys[afterFields]))
                    for index in toOneKeys.indices {
                        line.append(contentsOf: UnsafeBufferPointer(rebasing: keys[toOneKeys[index]]))
                        switch row[2 + kinds.count + index] {
                        case .null: line.append(contentsOf: "null".utf8)
                        case .integer(let target): ASCIISpelling.appendInteger(target, to: &line)
                        case let other: throw undecodable(primaryKey, plan.toOne[index].name, "\(other.summary) is not a key")
                        }
                    }
                    for (index, statement) in toManyStatements.enumerated() {
                        line.append(contentsOf: UnsafeBufferPointer(rebasing: keys[toManyKeys[index]]))
                        line.append(UInt8(ascii: "["))
                        var first = true
                        try ExactSQL.forEachRow(statement, [.integer(primaryKey)]) { target in
                            guard let key = target.integer(0) else {
                                throw undecodable(primaryKey, plan.toMany[index].name, "a link is not a key")
                            }
                            if !first { line.append(UInt8(ascii: ",")) }
                            first = false
                            ASCIISpelling.appendInteger(key, to: &line)
                        }
                        line.append(UInt8(ascii: "]"))
                    }
                    line.append(contentsOf: "}\n".utf8)
                    guard line.count <= ArchiveManifest.maximumLineBytes else {
                        throw StoreError.recordTooLarge(
                            path: path, entity: plan.name, primaryKey: primaryKey, lineBytes: line.count,
                            limit: ArchiveManifest.maximumLineBytes)
                    }
                    try emit(line)
                    bytes += line.count
                    if let stopAfterBytes, bytes >= stopAfterBytes {
                        cutAfter = primaryKey
                        throw RangeCut()
                    }
                }
            } catch is RangeCut {
                return cutAfter
            }
            return nil
        }
    }

    /// Ends a range's rows early (the statement is reset by `forEachRow`'s exit).
    private struct RangeCut: Error {}

    /// With `readers`, the lines are encoded in ranges as `encode` does: the same bytes, in the
    /// same order, into the one digest.
    package static func digest(
        _ db: Database, plan: ModelLayout.EntityPlan, schemaVersion: String, path: String, readers: KeyRangeReaders? = nil
    ) throws
        -> EntityMemberEncoding.Digest
    {
        try .of { try encode(db, plan: plan, schemaVersion: schemaVersion, path: path, readers: readers, write: $0) }
    }

    /// One record line, read back into its row and its links.
    package struct Row {
        package var primaryKey: Int64
        package var opt: Int64?
        /// In the order of `plan.fields` then `plan.toOne`.
        package var values: [StoredValue]
        /// Per `plan.toMany`: the targets' keys.
        package var links: [[Int64]]
    }

    package struct LineError: Error {
        package var reason: String

        package init(reason: String) { self.reason = reason }
    }

    /// Parses a record line of `plan`'s member strictly: every key the member has, no other, each
    /// value of its property's type.
    package static func decode(_ line: Data, plan: ModelLayout.EntityPlan, carriesOpt: Bool) throws -> Row {
        try LineDecoder(plan: plan, carriesOpt: carriesOpt).decode(line)
    }

    /// Reads one entity's record lines (`decode`), with what the checks of a line need made once
    /// for the entity rather than for each line: the keys an export writes, in its order, and the
    /// keys each composite level may have.
    ///
    /// A line whose keys are exactly those an export writes, in its order (and whose composites
    /// hold exactly their elements), is read by position, as TimeQuest's lines are
    /// (`LegacyArchive.decode`): `JSONLine.parseValues` compares each key's bytes with the
    /// expected key's (`JSONLine.KeysInOrder`), makes no `String` of a key and no list of
    /// members, and keeps a string of ASCII as where it lies in the line, which a text or date
    /// property stores from its bytes (`JSONLine.MemberValue.storedValue`, the one step both
    /// readers take for a value). Any other line (keys in another order, escaped, more or fewer,
    /// a composite with other elements, text `parseValues` leaves to `parseObject`) is read by
    /// name, as every line was before: the archive's format writes the keys in one order, but a
    /// line another writer made in any order is read, or refused, as it always was.
    /// *Why both ways give the same row or the same error:* `parseValues` reads a line only when
    /// `parseObject` reads it to these keys in this order (JSONLine's argument), else returns nil
    /// before any value is checked; when the keys are those the reading by name looks up, and no
    /// other, each look-up by name finds the member at that position (the keys are distinct, so
    /// the parser's duplicate check passes and the dictionary keeps every member), so no
    /// "missing" or "unknown" error can arise either way; what remains are the same checks of
    /// the same values, made in the same order (`_pk`, `_opt`, the fields, to-ones, to-manys).
    /// `ModelLineDecoderTests` reads lines of every shape, and hostile variants, both ways and
    /// compares.
    ///
    /// A class: the worker that decodes lines ahead takes its member's decoder for each run of
    /// lines, and a struct of a dozen arrays, sets and dictionaries was copied (each retained and
    /// released) for each line.
    package final class LineDecoder: Sendable {
        let plan: ModelLayout.EntityPlan
        let carriesOpt: Bool
        /// The line's top-level keys as export writes them, in order; nil when lines are read
        /// only by name (a composite written in two pieces, two keys the same, or a key a line
        /// spells with an escape: `KeysInOrder`).
        let keysInOrder: JSONLine.KeysInOrder?
        /// Each field's kind (a field out of `plan.fields` is its path, column and default,
        /// retained and released for each value).
        let kinds: [AttributeKind]
        /// Each field's top-level member in `keysInOrder`.
        let fieldMembers: [Int]
        /// The first member of the to-one relationships in `keysInOrder` (the to-manys follow).
        let firstRelationshipMember: Int
        /// The composites among the top-level members, by index, with their elements.
        let compositeMembers: [(index: Int, level: CompositeLevel)]
        /// Each field's name (its path, dotted) and its composite's path.
        let fieldNames: [String]
        let fieldParents: [[String]]
        /// Each field's element below its top-level member, level by level: its name and its
        /// position among its level's elements (`CompositeLevel.names`, the order `Template`
        /// writes them in); empty for a field that is a top-level member.
        let fieldSteps: [[(name: String, position: Int)]]
        /// The keys of each composite level (`[]`: the record's own level of fields).
        let expected: [[String]: Set<String>]
        /// Every top-level key a line may have.
        let known: Set<String>

        /// `byPosition` false reads every line by name (the tests compare the two ways).
        package init(plan: ModelLayout.EntityPlan, carriesOpt: Bool, byPosition: Bool = true) {
            self.plan = plan
            self.carriesOpt = carriesOpt
            fieldNames = plan.fields.map { $0.path.joined(separator: ".") }
            fieldParents = plan.fields.map { Array($0.path.dropLast()) }
            var expected: [[String]: Set<String>] = [:]
            for field in plan.fields {
                for depth in 0..<field.path.count { expected[Array(field.path.prefix(depth)), default: []].insert(field.path[depth]) }
            }
            self.expected = expected
            fieldSteps = plan.fields.map { field in
                field.path.indices.dropFirst().map { depth in
                    let name = field.path[depth]
                    let names = (expected[Array(field.path.prefix(depth))] ?? []).sorted()
                    return (name, names.firstIndex(of: name) ?? 0)
                }
            }
            known = Set(
                plan.fields.compactMap(\.path.first) + plan.toOne.map(\.name) + plan.toMany.map(\.name)
                    + [RecordJSON.primaryKeyKey, RecordJSON.optKey])
            // The top-level keys in the order `Template` writes them: a plain field's name, and a
            // composite's once for a run of its elements (opened again, it is written twice).
            var keys = [RecordJSON.primaryKeyKey] + (carriesOpt ? [RecordJSON.optKey] : [])
            var fieldMembers: [Int] = []
            var composites: [(Int, CompositeLevel)] = []
            var openComposite: String?
            for field in plan.fields {
                let first = field.path.first ?? ""
                let inComposite = field.path.count > 1
                if !inComposite || openComposite != first {
                    keys.append(first)
                    if inComposite { composites.append((keys.count - 1, CompositeLevel(path: [first], expected: expected))) }
                }
                fieldMembers.append(keys.count - 1)
                openComposite = inComposite ? first : nil
            }
            firstRelationshipMember = keys.count
            keys += plan.toOne.map(\.name) + plan.toMany.map(\.name)
            self.fieldMembers = fieldMembers
            compositeMembers = composites
            // Each key once (as the by-name reading's dictionary tells keys apart); a composite's
            // elements in the order its level names them.
            keysInOrder =
                byPosition
                ? JSONLine.KeysInOrder(
                    keys,
                    objects: Dictionary(
                        composites.compactMap { index, level in level.keysInOrder.map { (index, $0) } },
                        uniquingKeysWith: { first, _ in first }))
                : nil
            kinds = plan.fields.map(\.kind)
        }

        package func decode(_ line: Data) throws -> Row {
            if let keys = keysInOrder {
                let row = try line.withUnsafeBytes { raw -> Row? in
                    let bytes = raw.bindMemory(to: UInt8.self)
                    guard let members = JSONLine.parseValues(bytes, keys: keys) else { return nil }
                    return try decodeInOrder(members, of: bytes)
                }
                if let row { return row }
            }
            let members: [(key: String, value: JSONValue)]
            do {
                members = try JSONLine.parseObject(line)
            } catch let error as JSONLine.SyntaxError {
                throw LineError(reason: error.lineReason)
            }
            return try decodeByName(members)
        }

        /// Whether `value` is a composite object of exactly the keys its level has, its inner
        /// composites likewise.
        private func holdsExactly(_ value: JSONValue, _ level: CompositeLevel) -> Bool {
            guard case .object(let members) = value, members.count == level.names.count else { return false }
            for (name, innerLevel) in zip(level.names, level.inner) {
                guard let inner = members[name] else { return false }
                if let innerLevel, !holdsExactly(inner, innerLevel) { return false }
            }
            return true
        }

        /// The same of a member as `parseValues` read it: an object read in order (`.object`) has
        /// exactly its level's keys (`level.keysInOrder`), so only its inner composites are left
        /// to check; any other member is checked as its JSON value.
        private func holdsExactly(_ member: JSONLine.MemberValue, _ level: CompositeLevel, in line: UnsafeBufferPointer<UInt8>) -> Bool {
            guard case .object(_, let values) = member else { return holdsExactly(member.json(in: line), level) }
            for (value, innerLevel) in zip(values, level.inner) {
                if let innerLevel, !holdsExactly(value, innerLevel, in: line) { return false }
            }
            return true
        }

        /// A composite level's element names (`expected[path]`) and, for each, its own level
        /// when it is a composite too: made once, so that no path is built and hashed for a line.
        final class CompositeLevel: Sendable {
            let names: [String]
            let inner: [CompositeLevel?]
            /// The names as a line's object must spell them, in their order, to be read by
            /// position (`JSONLine.MemberValue.object`); nil when it cannot be (`KeysInOrder`).
            let keysInOrder: JSONLine.KeysInOrder?

            init(path: [String], expected: [[String]: Set<String>]) {
                names = (expected[path] ?? []).sorted()
                inner = names.map { expected[path + [$0]] != nil ? CompositeLevel(path: path + [$0], expected: expected) : nil }
                var objects: [Int: JSONLine.KeysInOrder] = [:]
                for (index, level) in inner.enumerated() { if let keys = level?.keysInOrder { objects[index] = keys } }
                keysInOrder = JSONLine.KeysInOrder(names, objects: objects)
            }
        }

        private func mismatch(_ index: Int, _ mismatch: ValueJSON.TypeMismatch, primaryKey: Int64) -> LineError {
            LineError(
                reason:
                    "\(fieldNames[index]) must be \(mismatch.expected), found \(mismatch.found) (\(plan.name) \(RecordJSON.primaryKeyKey) \(primaryKey))"
            )
        }

        /// A line's `_pk`; TimeQuest's lines (`LegacyArchive`) are checked by it too.
        package static func primaryKey(_ value: JSONValue?) throws(LineError) -> Int64 {
            guard case .integer(let primaryKey)? = value else { throw LineError(reason: "\(RecordJSON.primaryKeyKey) must be an integer") }
            return primaryKey
        }

        /// A line's `_opt` (format 2 and later; a format 1 line has none, and its records restore
        /// with 1, as Core Data gives a newly inserted row: docs/archive-format.md).
        package static func opt(_ value: JSONValue?) throws(LineError) -> Int64? {
            switch value {
            case .integer(let number)?: return number
            case .null?: return nil
            case nil: throw LineError(reason: "\(RecordJSON.optKey) is missing")
            case let other?: throw LineError(reason: "\(RecordJSON.optKey) must be an integer or null, found \(other.typeName)")
            }
        }

        private static func toOne(_ value: JSONValue?, _ relationship: ModelLayout.ToOne) throws -> StoredValue {
            switch value {
            case .null?: return .null
            case .integer(let target)?: return .integer(target)
            case nil: throw LineError(reason: "\(relationship.name) is missing")
            case let other?: throw LineError(reason: "\(relationship.name) must be a _pk or null, found \(other.typeName)")
            }
        }

        private static func toMany(_ value: JSONValue?, _ relationship: ModelLayout.ToMany) throws -> [Int64] {
            guard case .array(let elements)? = value else {
                throw LineError(reason: "\(relationship.name) must be an array of the _pk of its \(relationship.destination) records")
            }
            var keys: [Int64] = []
            keys.reserveCapacity(elements.count)
            for element in elements {
                guard case .integer(let key) = element else {
                    throw LineError(reason: "\(relationship.name) holds \(element.typeName), not a _pk")
                }
                // Ascending and once each, as export writes them: a link is a set member.
                if let last = keys.last, key <= last { throw LineError(reason: "\(relationship.name) is not in ascending _pk order") }
                keys.append(key)
            }
            return keys
        }

        /// A line whose keys are exactly `keysInOrder`, its values in order (`parseValues`); nil
        /// when a composite does not hold exactly its elements (checked before any value, as the
        /// reading by name would find the difference only at that composite's field), for the
        /// reading by name.
        private func decodeInOrder(_ members: [JSONLine.MemberValue], of line: UnsafeBufferPointer<UInt8>) throws -> Row? {
            for composite in compositeMembers where !holdsExactly(members[composite.index], composite.level, in: line) {
                return nil
            }
            let primaryKey = try Self.primaryKey(members[0].json(in: line))
            let opt = carriesOpt ? try Self.opt(members[1].json(in: line)) : 1
            var values: [StoredValue] = []
            values.reserveCapacity(kinds.count + plan.toOne.count)
            for index in kinds.indices {
                var member = members[fieldMembers[index]]
                // `holdsExactly` found every level an object holding this name.
                for step in fieldSteps[index] {
                    guard let next = member.member(step.name, at: step.position, in: line) else { return nil }
                    member = next
                }
                do {
                    values.append(try member.storedValue(in: line, as: kinds[index], exactSpelling: true))
                } catch let error as ValueJSON.TypeMismatch {
                    throw mismatch(index, error, primaryKey: primaryKey)
                }
            }
            var member = firstRelationshipMember
            for relationship in plan.toOne {
                values.append(try Self.toOne(members[member].json(in: line), relationship))
                member += 1
            }
            var links: [[Int64]] = []
            links.reserveCapacity(plan.toMany.count)
            for relationship in plan.toMany {
                links.append(try Self.toMany(members[member].json(in: line), relationship))
                member += 1
            }
            return Row(primaryKey: primaryKey, opt: opt, values: values, links: links)
        }

        /// Any line: its members looked up by name, what is missing or left over said.
        private func decodeByName(_ members: [(key: String, value: JSONValue)]) throws -> Row {
            var object: [String: JSONValue] = [:]
            for member in members { object[member.key] = member.value }
            let primaryKey = try Self.primaryKey(object.removeValue(forKey: RecordJSON.primaryKeyKey))
            var opt: Int64? = 1
            if carriesOpt { opt = try Self.opt(object.removeValue(forKey: RecordJSON.optKey)) }
            var values: [StoredValue] = []
            // Composite objects are taken apart level by level; what is left over is unknown.
            var composites: [[String]: [String: JSONValue]] = [[]: object]
            func container(_ parents: [String]) throws -> [String: JSONValue] {
                if let known = composites[parents] { return known }
                let outer = try container(Array(parents.dropLast()))
                let name = parents.joined(separator: ".")
                guard let inner = outer[parents[parents.count - 1]] else { throw LineError(reason: "\(name) is missing") }
                guard case .object(let members) = inner else {
                    throw LineError(reason: "\(name) must be an object, found \(inner.typeName)")
                }
                composites[parents] = members
                return members
            }
            for (index, field) in plan.fields.enumerated() {
                let name = fieldNames[index]
                guard let json = try container(fieldParents[index])[field.path[field.path.count - 1]] else {
                    throw LineError(reason: "\(name) is missing")
                }
                do {
                    // Spelled as export writes it: the restore proves itself against the archive's
                    // checksums, so another spelling would be found only after the store is written.
                    values.append(ValueCoding.encode(try ValueJSON.value(json, as: field.kind, exactSpelling: true)))
                } catch let error as ValueJSON.TypeMismatch {
                    throw mismatch(index, error, primaryKey: primaryKey)
                }
            }
            // Every key of every composite level was a field or a composite.
            for (parents, members) in composites where parents != [] {
                if let extra = members.keys.sorted().first(where: { !(expected[parents] ?? []).contains($0) }) {
                    throw LineError(reason: "unknown property \((parents + [extra]).joined(separator: ".")) for \(plan.name)")
                }
            }
            for relationship in plan.toOne { values.append(try Self.toOne(object[relationship.name], relationship)) }
            var links: [[Int64]] = []
            for relationship in plan.toMany { links.append(try Self.toMany(object[relationship.name], relationship)) }
            if let extra = object.keys.sorted().first(where: { !known.contains($0) }) {
                throw LineError(reason: "unknown property \(extra) for \(plan.name)")
            }
            return Row(primaryKey: primaryKey, opt: opt, values: values, links: links)
        }
    }
}

/// Entity members of a store no model describes (`source.schema` `"generic"`): one member per
/// entity table, named after its root entity, each row under its column names with its SQLite
/// storage class kept exactly (the encoding of "Other tables"): `_pk`, then every other column in
/// the table's order, `Z_ENT` and `Z_OPT` included. Nothing is typed, so nothing is guessed.
package enum GenericMemberEncoding {
    package static func encode(
        _ db: Database, entity: String, table: String, schemaVersion: String, path: String,
        progress: ((_ done: Int, _ total: Int) -> Void)? = nil, write: ([UInt8]) throws -> Void
    ) throws -> Int {
        let columns = try db.columns(in: table).map(\.name).filter { $0.uppercased() != CoreDataSQL.keyColumn }
        let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0
        try write(EntityHeader(schemaVersion: schemaVersion, entity: entity, count: total).line())
        let keys = columns.map { ModelMemberEncoding.key($0) }
        let selected = ([CoreDataSQL.keyColumn] + columns.map(\.quotedSQLIdentifier)).joined(separator: ", ")
        let prefix = Array("{\"\(RecordJSON.primaryKeyKey)\":".utf8)
        var line: [UInt8] = []
        var done = 0
        try ExactSQL.forEachRow(db, sql: "SELECT \(selected) FROM \(table) ORDER BY \(CoreDataSQL.keyColumn)") { row in
            line.removeAll(keepingCapacity: true)
            line.append(contentsOf: prefix)
            TableMemberEncoding.append(row[0], to: &line)
            for (index, key) in keys.enumerated() {
                line.append(contentsOf: key)
                TableMemberEncoding.append(row[1 + index], to: &line)
            }
            line.append(contentsOf: "}\n".utf8)
            guard line.count <= ArchiveManifest.maximumLineBytes else {
                throw StoreError.recordTooLarge(
                    path: path, entity: entity, primaryKey: row.integer(0) ?? 0, lineBytes: line.count,
                    limit: ArchiveManifest.maximumLineBytes)
            }
            try write(line)
            done += 1
            if done % 10_000 == 0 { progress?(done, total) }
        }
        progress?(done, total)
        return done
    }

    package static func digest(
        _ db: Database, entity: String, table: String, schemaVersion: String, path: String
    ) throws
        -> EntityMemberEncoding.Digest
    {
        try .of { try encode(db, entity: entity, table: table, schemaVersion: schemaVersion, path: path, write: $0) }
    }
}
