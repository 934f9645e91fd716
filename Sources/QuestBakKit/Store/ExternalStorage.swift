import Foundation
import GRDB

/// The files Core Data keeps beside a store for attributes with external storage
/// (`@Attribute(.externalStorage)`): `.<store name>_SUPPORT/_EXTERNAL_DATA/<file>` next to the
/// store, the column holding a short reference to the file. The layout is inference in the spec
/// (model-cache.md): a backup carries every file it finds there byte for byte, and names
/// anything else in the support folder that it does not carry.
package enum ExternalStorage {
    /// Archive members of external-storage files: `external/<file name>`.
    package static let memberPrefix = "external/"

    package static func supportFolder(forStore store: URL) -> URL {
        store.deletingLastPathComponent().appendingPathComponent(".\(store.deletingPathExtension().lastPathComponent)_SUPPORT")
    }

    package static func folder(forStore store: URL) -> URL {
        supportFolder(forStore: store).appendingPathComponent("_EXTERNAL_DATA")
    }

    /// A name that is safe as a file name on every system the archive may be unpacked on.
    package static func isSafeFileName(_ name: String) -> Bool {
        guard let first = name.utf8.first, first != UInt8(ascii: "."), name.utf8.count <= 255 else { return false }
        return name.utf8.allSatisfy { byte in
            (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || [45, 46, 95].contains(byte)
        }
    }

    /// The files to carry, by name, and one sentence for each thing in the support folder that
    /// is not carried (another folder, a link, a name that is not safe to unpack).
    package static func files(forStore store: URL) throws -> (files: [(name: String, url: URL)], notCarried: [String]) {
        let support = supportFolder(forStore: store)
        let manager = FileManager.default
        guard manager.fileExists(atPath: support.path) else { return ([], []) }
        func list(_ folder: URL) throws -> [String] {
            do {
                return try manager.contentsOfDirectory(atPath: folder.path)
            } catch {
                // A folder that is there but cannot be read would be a backup without its files.
                throw StoreError.unreadable(path: folder.path, reason: error.localizedDescription)
            }
        }
        let top = try list(support)
        var notCarried: [String] = []
        for entry in top.sorted() where entry != "_EXTERNAL_DATA" {
            notCarried.append("\(support.appendingPathComponent(entry).path) is not external-storage data and is not carried")
        }
        let folder = folder(forStore: store)
        var files: [(String, URL)] = []
        for name in (manager.fileExists(atPath: folder.path) ? try list(folder) : []).sorted() {
            let url = folder.appendingPathComponent(name)
            let type = (try? manager.attributesOfItem(atPath: url.path)[.type] as? FileAttributeType) ?? nil
            guard type == .typeRegular, isSafeFileName(name) else {
                notCarried.append("\(url.path) is not a plain file with a plain name and is not carried")
                continue
            }
            files.append((name, url))
        }
        return (files, notCarried)
    }

    /// Records that refer to an external-storage file that is not among `available`, one sentence
    /// each (at most 20, then a count).
    package static func missingReferences(_ db: Database, available: Set<String>) throws -> [String] {
        let missing = try references(db).filter { !available.contains($0.name) }
        var sentences = missing.prefix(20).map {
            "\($0.entity) \($0.primaryKey.reportable) \($0.column) refers to the external-storage file \($0.name), which is not there"
        }
        if missing.count > sentences.count { sentences.append("and \(missing.count - sentences.count) more such references") }
        return sentences
    }

    /// Every reference to an external-storage file in the store's entity tables. The form of a
    /// reference is inference (model-cache.md): a BLOB of the byte 0x02 and then the file's name,
    /// a UUID in ASCII.
    static func references(_ db: Database) throws -> [(entity: String, primaryKey: StoredValue, column: String, name: String)] {
        var found: [(entity: String, primaryKey: StoredValue, column: String, name: String)] = []
        for (key, table) in try StoreReader.modelTables(db) {
            for column in try db.columns(in: table) where column.type.uppercased().hasPrefix("BLOB") {
                let quoted = column.name.quotedDatabaseIdentifier
                let sql = """
                    SELECT Z_PK, substr(\(quoted), 2) FROM \(table.quotedDatabaseIdentifier)
                    WHERE typeof(\(quoted)) = 'blob' AND length(\(quoted)) = 37 AND substr(\(quoted), 1, 1) = x'02' ORDER BY Z_PK
                    """
                for row in try ExactSQL.fetchAll(db, sql: sql) {
                    guard case .blob(let bytes) = row[1], let name = String(bytes: bytes, encoding: .ascii) else { continue }
                    found.append((key.name, row[0], column.name, name))
                }
            }
        }
        return found
    }

    /// Writes the files into the store's external-storage folder, each durably (written to a
    /// temporary name, fsynced, renamed, the folder fsynced). A file already there with the same
    /// bytes is kept; one with other bytes is refused before anything is written. Returns what it
    /// created, for `remove` to take back if the restore fails after this.
    package static func install(_ files: [(name: String, data: Data)], forStore store: URL) throws -> [URL] {
        guard !files.isEmpty else { return [] }
        let folder = folder(forStore: store)
        for (name, data) in files {
            let url = folder.appendingPathComponent(name)
            if let existing = FileManager.default.contents(atPath: url.path), existing != data {
                throw OutputError.exists(path: url.path)
            }
        }
        var created: [URL] = []
        for url in [supportFolder(forStore: store), folder] where !FileManager.default.fileExists(atPath: url.path) {
            do {
                try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
            } catch {
                remove(created)
                throw OutputError.cannotCreate(path: url.path, reason: error.localizedDescription)
            }
            created.append(url)
        }
        for (name, data) in files {
            let url = folder.appendingPathComponent(name)
            if FileManager.default.fileExists(atPath: url.path) { continue }
            do {
                let output = try AtomicOutputFile(destination: url, overwrite: false)
                try data.withUnsafeBytes { buffer in
                    var offset = 0
                    while offset < buffer.count {
                        let written = write(output.fileDescriptor, buffer.baseAddress?.advanced(by: offset), buffer.count - offset)
                        guard written > 0 else { throw OutputError.io(path: url.path, reason: String(cString: strerror(errno))) }
                        offset += written
                    }
                }
                try output.commit()
                created.append(url)
            } catch {
                remove(created)
                throw error
            }
        }
        // The files' folder in the support folder, and the support folder in the store's folder:
        // the store is put in place next, and a power loss must not keep it and lose the folders
        // its records point into.
        Durability.syncDirectory(of: folder)
        Durability.syncDirectory(of: supportFolder(forStore: store))
        return created
    }

    /// Removes what `install` created, files before their folders.
    package static func remove(_ created: [URL]) {
        for url in created.reversed() { try? FileManager.default.removeItem(at: url) }
    }
}
