import CoreDataStore
import Foundation

extension Differ {
    /// A record line as its table keeps it, before the loader places it: each member's value as
    /// the scratch store holds it (`DiffValue`; `_pk` an integer or null, the other ignored keys
    /// null, as nothing places them), in the line's order, and for each member of a
    /// `Table.flagged` property whose value is a string that is a well-formed cloudID, the
    /// FNV-1a hash of its UTF-8 bytes (all the loader's census and filter take of it).
    struct EncodedRecord {
        var keys: [String]
        var values: [StoredValue]
        var cloudIDs: [(index: Int, hash: UInt64)]
    }

    /// Encodes a side's record lines (`EncodedRecord`) on the thread that reads them, so that the
    /// thread that inserts them (the scratch store's, the busier one while a side is read) only
    /// places and binds the values. A member's lines after its first are read by position
    /// (`JSONLine.parseValues`) when their keys are the first line's, in the same order, as an
    /// encoder writes every line of a member: no `String` is made of a key, nor of a value of
    /// ASCII text. *Why the values are those `parseObject` gives:* `parseValues` gives them
    /// (its argument), a value of ASCII text as where its bytes lie, and a `String` decoded from
    /// those bytes has them as its UTF-8, which `DiffValue.encode` stores and the hash reads; so
    /// each record is what `encode(_:text:)` makes of the line parsed whole.
    struct LineEncoder {
        private let text = ValueText()
        private var entity = ""
        /// The keys of the first line of `entity`'s member, with what each is (nil when that line
        /// could not be read in order: every line is then parsed whole).
        private var keys: (inOrder: JSONLine.KeysInOrder, roles: [Role])?

        /// What a member's key is to the loader.
        enum Role {
            case primaryKey, ignored, flagged, value

            init(_ key: String) {
                if key == RecordJSON.primaryKeyKey {
                    self = .primaryKey
                } else if Differ.ignored.contains(key) {
                    self = .ignored
                } else if Table.flagged.contains(key) {
                    self = .flagged
                } else {
                    self = .value
                }
            }
        }

        /// The record of `entity`'s record line `line` (no newline); throws what `parseObject`
        /// throws for a line that is no JSON object.
        mutating func encode(_ entity: String, _ line: UnsafeBufferPointer<UInt8>) throws -> EncodedRecord {
            if entity == self.entity, let keys, let values = JSONLine.parseValues(line, keys: keys.inOrder) {
                return encode(values, keys: keys.inOrder.names, roles: keys.roles, in: line)
            }
            return encode(entity, parsed: try JSONLine.parseObject(line))
        }

        /// The record of `entity`'s record line parsed whole (`members`); the first of its member
        /// gives the keys the lines after it are read by.
        mutating func encode(_ entity: String, parsed members: [(key: String, value: JSONValue)]) -> EncodedRecord {
            if entity != self.entity {
                self.entity = entity
                let names = members.map(\.key)
                keys = JSONLine.KeysInOrder(names).map { ($0, names.map(Role.init)) }
            }
            return Self.encode(members, text: text)
        }

        /// The record of a line parsed whole.
        static func encode(_ members: [(key: String, value: JSONValue)], text: ValueText) -> EncodedRecord {
            var record = EncodedRecord(keys: [], values: [], cloudIDs: [])
            record.keys.reserveCapacity(members.count)
            record.values.reserveCapacity(members.count)
            for (index, member) in members.enumerated() {
                let role = Role(member.key)
                record.keys.append(member.key)
                record.values.append(value(member.value, role, text))
                if role == .flagged, case .string(let string) = member.value, let hash = Loader.cloudIDHash(string) {
                    record.cloudIDs.append((index, hash))
                }
            }
            return record
        }

        /// `Loader.cloudIDHash` of a member's value read in order, of a string's bytes where they lie.
        static func cloudIDHash(_ member: JSONLine.MemberValue, in line: UnsafeBufferPointer<UInt8>) -> UInt64? {
            guard case .asciiText(let range) = member else {
                guard case .string(let string) = member.json(in: line) else { return nil }
                return Loader.cloudIDHash(string)
            }
            let bytes = UnsafeBufferPointer(rebasing: line[range])
            return DeterministicID.isWellFormed(UnsafeRawBufferPointer(bytes)) ? StableHasher.fnv1a(bytes) : nil
        }

        private static func value(_ value: JSONValue, _ role: Role, _ text: ValueText) -> StoredValue {
            switch role {
            case .primaryKey:
                guard case .integer(let key) = value else { return .null }
                return .integer(key)
            case .ignored: return .null
            case .flagged, .value: return DiffValue.encode(value, text)
            }
        }

        private func encode(
            _ values: [JSONLine.MemberValue], keys: [String], roles: [Role], in line: UnsafeBufferPointer<UInt8>
        ) -> EncodedRecord {
            var record = EncodedRecord(keys: keys, values: [], cloudIDs: [])
            record.values.reserveCapacity(values.count)
            for (index, member) in values.enumerated() {
                let role = roles[index]
                if case .asciiText(let range) = member, role != .primaryKey {
                    record.values.append(role == .ignored ? .null : .text(Data(UnsafeBufferPointer(rebasing: line[range]))))
                } else {
                    record.values.append(Self.value(member.json(in: line), role, text))
                }
                if role == .flagged, let hash = Self.cloudIDHash(member, in: line) { record.cloudIDs.append((index, hash)) }
            }
            return record
        }
    }
}
