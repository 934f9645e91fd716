import Crypto
import GRDB

/// The bytes of one entity member (header line, then one line per record), produced from a
/// store. Export writes them; import computes their digest to prove what it wrote reads back,
/// and the digests equal those a later export of the new store will list.
enum EntityMemberEncoding {
    /// Streams the member through `write` in pieces; returns the number of records.
    static func encode(
        _ db: Database, schema: Schema, entity: Entity, entityNumber: Int?, path: String,
        progress: ((_ done: Int, _ total: Int) -> Void)? = nil, write: ([UInt8]) throws -> Void
    ) throws -> Int {
        let table = TableLayout(entity: entity).tableName
        let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)" + (entityNumber.map { " WHERE Z_ENT = \($0)" } ?? "")) ?? 0
        try write(EntityHeader(schemaVersion: schema.versionIdentifier, entity: entity.name, count: total).line())
        var done = 0
        var line: [UInt8] = []
        let propertyNames = entity.storedPropertyNames
        try StoreReader.forEachRecord(db, entity: entity, entityNumber: entityNumber, path: path) { record in
            line.removeAll(keepingCapacity: true)
            RecordJSON.encodeLine(record, propertyNames: propertyNames, into: &line)
            try write(line)
            done += 1
            if done % 1000 == 0 { progress?(done, total) }
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
