import Crypto
import GRDB

/// The bytes of one entity member (header line, then one line per record), produced from a
/// store. Export writes them; import computes their digest to prove what it wrote reads back,
/// and the digests equal those a later export of the new store will list.
enum EntityMemberEncoding {
    /// Streams the member through `write` in pieces; returns the number of records.
    ///
    /// This is the export's hot loop: each row goes from SQLite's columns straight to JSON bytes,
    /// through the same value decoding as every other reader, but without building a record.
    static func encode(
        _ db: Database, schema: Schema, entity: Entity, entityNumber: Int?, path: String,
        progress: ((_ done: Int, _ total: Int) -> Void)? = nil, write: ([UInt8]) throws -> Void
    ) throws -> Int {
        let layout = TableLayout(entity: entity)
        let filter = entityNumber.map { " WHERE Z_ENT = \($0)" } ?? ""
        let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(layout.tableName)\(filter)") ?? 0
        try write(EntityHeader(schemaVersion: schema.versionIdentifier, entity: entity.name, count: total).line())
        // One (key bytes, column index, kind) per property, in the archive's key order.
        let available = Set(try db.columns(in: layout.tableName).map { $0.name.uppercased() })
        var selected: [String] = []
        let properties: [(key: [UInt8], column: Int?, kind: AttributeKind)] = entity.storedPropertyNames.map { name in
            var key: [UInt8] = [UInt8(ascii: ",")]
            RecordJSON.appendString(name, to: &key)
            key.append(UInt8(ascii: ":"))
            let kind = entity.attribute(named: name)?.kind ?? .integer
            guard let column = layout.column(for: name)?.name, available.contains(column) else { return (key, nil, kind) }
            selected.append(column)
            return (key, selected.count, kind)
        }
        let sql = "SELECT Z_PK\(selected.map { ", " + $0 }.joined()) FROM \(layout.tableName)\(filter) ORDER BY Z_PK"
        let cursor = try Row.fetchCursor(db, sql: sql)
        var done = 0
        var line: [UInt8] = []
        line.reserveCapacity(512)
        let prefix = Array("{\"\(RecordJSON.primaryKeyKey)\":".utf8)
        while let row = try cursor.next() {
            let primaryKey: Int64 = row[0]
            line.removeAll(keepingCapacity: true)
            line.append(contentsOf: prefix)
            line.append(contentsOf: String(primaryKey).utf8)
            for property in properties {
                line.append(contentsOf: property.key)
                guard let column = property.column else {
                    line.append(contentsOf: "null".utf8)
                    continue
                }
                do {
                    RecordJSON.appendValue(try ValueCoding.decode(row[column] as DatabaseValue, as: property.kind), to: &line)
                } catch let failure as ValueCoding.Failure {
                    let name = entity.storedPropertyNames[properties.firstIndex { $0.column == column } ?? 0]
                    throw StoreError.undecodableValue(path: path, entity: entity.name, primaryKey: primaryKey, property: name, reason: failure.reason)
                }
            }
            line.append(contentsOf: "}\n".utf8)
            try write(line)
            done += 1
            if done % 10_000 == 0 { progress?(done, total) }
        }
        progress?(done, total)
        return done
    }

    struct Digest: Sendable, Equatable, Encodable {
        var count: Int
        var bytes: Int64
        var sha256: String
    }

    static func digest(_ db: Database, schema: Schema, entity: Entity, path: String) throws -> Digest {
        var hasher = SHA256()
        var bytes: Int64 = 0
        let count = try encode(db, schema: schema, entity: entity, entityNumber: schema.entityNumber(of: entity.name), path: path) { chunk in
            hasher.update(data: chunk)
            bytes += Int64(chunk.count)
        }
        return Digest(count: count, bytes: bytes, sha256: hasher.finalize().hexString)
    }
}
