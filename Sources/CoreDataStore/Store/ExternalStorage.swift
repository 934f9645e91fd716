import Foundation
import GRDB

/// The files Core Data keeps beside a store for attributes with external storage
/// (`@Attribute(.externalStorage)`): `.<store name>_SUPPORT/_EXTERNAL_DATA/<file>` next to the
/// store, the column holding a short reference to the file. The layout is inference in the spec
/// (model-cache.md): a backup carries every file it finds there byte for byte, and names
/// anything else in the support folder that it does not carry.
package enum ExternalStorage {
    /// Bytes read at a time: 1 MiB, the size of the archive's data frames, so that a file's chunks
    /// fill whole frames and reading one holds no more than a frame.
    package static let chunkSize = 1 << 20

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

    /// What is at `url` itself, a link not followed (lstat); nil when nothing is there.
    static func entryType(at url: URL) -> mode_t? {
        var status = stat()
        guard lstat(url.path, &status) == 0 else { return nil }
        return status.st_mode & S_IFMT
    }

    /// The files to carry, by name, and one sentence for each thing in the support folder that
    /// is not carried (another folder, a link, a name that is not safe to unpack). A link is
    /// never followed, the support folder and `_EXTERNAL_DATA` included: what it points at is
    /// outside the store's folder, and a backup carries only what is the store's.
    package static func files(forStore store: URL) throws -> (files: [(name: String, url: URL)], notCarried: [String]) {
        let support = supportFolder(forStore: store)
        let manager = FileManager.default
        func list(_ folder: URL) throws -> [String] {
            do {
                return try manager.contentsOfDirectory(atPath: folder.path)
            } catch {
                // A folder that is there but cannot be read would be a backup without its files.
                throw StoreError.unreadable(path: folder.path, reason: error.localizedDescription)
            }
        }
        /// Whether `folder` is a real folder to read; else why it is not carried (nil: absent).
        func status(of folder: URL) -> (isFolder: Bool, notCarried: String?) {
            switch entryType(at: folder) {
            case nil: return (false, nil)
            case S_IFDIR: return (true, nil)
            case S_IFLNK: return (false, "\(folder.path) is a symbolic link, not followed, and is not carried")
            default: return (false, "\(folder.path) is not a folder and is not carried")
            }
        }
        let supportStatus = status(of: support)
        guard supportStatus.isFolder else { return ([], supportStatus.notCarried.map { [$0] } ?? []) }
        let top = try list(support)
        var notCarried: [String] = []
        for entry in top.sorted() where entry != "_EXTERNAL_DATA" {
            notCarried.append("\(support.appendingPathComponent(entry).path) is not external-storage data and is not carried")
        }
        let folder = folder(forStore: store)
        let folderStatus = status(of: folder)
        if let sentence = folderStatus.notCarried { notCarried.append(sentence) }
        var files: [(String, URL)] = []
        for name in (folderStatus.isFolder ? try list(folder) : []).sorted() {
            let url = folder.appendingPathComponent(name)
            guard entryType(at: url) == S_IFREG, isSafeFileName(name) else {
                notCarried.append("\(url.path) is not a plain file with a plain name and is not carried")
                continue
            }
            // Archive members that differ only in case are one file on a case-insensitive disk,
            // and a reader refuses the second: the first in sorted order is carried.
            if let first = files.first(where: { $0.0.lowercased() == name.lowercased() }) {
                notCarried.append("\(url.path) differs only in case from \(first.0), which is carried; it is not carried")
                continue
            }
            files.append((name, url))
        }
        return (files, notCarried)
    }

    /// Reads the plain file at `url` a block at a time, handing each to `body`: an
    /// external-storage file may be larger than memory. A link is not followed, and a FIFO does
    /// not block the open (then it is refused as not a plain file).
    package static func readChunks(of url: URL, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let descriptor = open(url.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw StoreError.unreadable(path: url.path, reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw StoreError.unreadable(path: url.path, reason: "not a plain file")
        }
        var buffer = [UInt8](repeating: 0, count: ExternalStorage.chunkSize)
        while true {
            let count = buffer.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw StoreError.unreadable(path: url.path, reason: String(cString: strerror(errno))) }
            if count == 0 { return }
            try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
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
    package static func references(_ db: Database) throws -> [(entity: String, primaryKey: StoredValue, column: String, name: String)] {
        var found: [(entity: String, primaryKey: StoredValue, column: String, name: String)] = []
        for (key, table) in try StoreReader.modelTables(db) {
            let columns = try db.columns(in: table).filter { $0.type.uppercased().hasPrefix("BLOB") }.map(\.name)
            guard !columns.isEmpty else { continue }
            // One pass over the table for all its BLOB columns (a pass per column read every row
            // once for each): a column's name, or NULL, per row that refers to a file anywhere.
            let references = columns.map { column in
                let quoted = column.quotedSQLIdentifier
                return "typeof(\(quoted)) = 'blob' AND length(\(quoted)) = 37 AND substr(\(quoted), 1, 1) = x'02'"
            }
            let names = zip(columns, references).map { column, reference in
                "CASE WHEN \(reference) THEN substr(\(column.quotedSQLIdentifier), 2) END"
            }
            let sql = """
                SELECT \(CoreDataSQL.keyColumn), \(names.joined(separator: ", ")) FROM \(table.quotedSQLIdentifier)
                WHERE \(references.map { "(\($0))" }.joined(separator: " OR ")) ORDER BY \(CoreDataSQL.keyColumn)
                """
            var byColumn = Array(
                repeating: [(entity: String, primaryKey: StoredValue, column: String, name: String)](), count: columns.count)
            for row in try ExactSQL.fetchAll(db, sql: sql) {
                for (index, column) in columns.enumerated() {
                    guard case .blob(let bytes) = row[1 + index], let name = String(bytes: bytes, encoding: .ascii) else { continue }
                    byColumn[index].append((key.name, row[0], column, name))
                }
            }
            // Column by column, each by Z_PK: the order the references have always been listed in.
            found += byColumn.joined()
        }
        return found
    }

    /// Refuses a store whose support folder or `_EXTERNAL_DATA` is a link, or something other
    /// than a folder: a file written there would land wherever the link points, outside the
    /// target's folder. Absent folders are fine (`install` makes them). So is a plain file under
    /// one of `names` (`install` compares its bytes), but nothing else there (a link, a FIFO, a
    /// folder), which the store's records would point at.
    package static func checkConfined(forStore store: URL, names: [String] = []) throws {
        for url in [supportFolder(forStore: store), folder(forStore: store)] {
            switch entryType(at: url) {
            case nil, S_IFDIR: continue
            case S_IFLNK:
                throw OutputError.cannotCreate(path: url.path, reason: "it is a symbolic link, and nothing is written through one")
            default: throw OutputError.cannotCreate(path: url.path, reason: "it is not a folder")
            }
        }
        for name in names {
            let url = folder(forStore: store).appendingPathComponent(name)
            if let type = entryType(at: url), type != S_IFREG {
                throw OutputError.cannotCreate(path: url.path, reason: "something other than a plain file is there")
            }
        }
    }

    /// Writes the files (copied from `source`, a block at a time) into the store's
    /// external-storage folder, each durably (written to a temporary name, fsynced, renamed, the
    /// folder fsynced). A file already there with the same bytes is kept; one with other bytes,
    /// or anything but a plain file under that name, is refused before anything is written, and
    /// so are a support folder or `_EXTERNAL_DATA` that are links. Returns what it created, for
    /// `remove` to take back if the restore fails after this.
    package static func install(_ files: [(name: String, source: URL)], forStore store: URL) throws -> [URL] {
        guard !files.isEmpty else { return [] }
        try checkConfined(forStore: store, names: files.map(\.name))
        let folder = folder(forStore: store)
        for (name, source) in files {
            let url = folder.appendingPathComponent(name)
            if entryType(at: url) != nil, try !sameBytes(url, source) { throw OutputError.exists(path: url.path) }
        }
        var created: [URL] = []
        for url in [supportFolder(forStore: store), folder] where entryType(at: url) == nil {
            do {
                try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
            } catch {
                remove(created)
                throw OutputError.cannotCreate(path: url.path, reason: error.localizedDescription)
            }
            created.append(url)
        }
        for (name, source) in files {
            let url = folder.appendingPathComponent(name)
            if entryType(at: url) != nil { continue }
            do {
                let output = try AtomicOutputFile(destination: url, overwrite: false)
                try readChunks(of: source) { chunk in
                    var offset = 0
                    while offset < chunk.count {
                        let written = write(output.fileDescriptor, chunk.baseAddress?.advanced(by: offset), chunk.count - offset)
                        if written < 0 && errno == EINTR { continue }
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

    /// Whether two plain files hold the same bytes (`FileBytes.same`).
    static func sameBytes(_ first: URL, _ second: URL) throws -> Bool {
        guard let same = try FileBytes.same(first.path, second.path) else {
            throw StoreError.unreadable(path: first.path, reason: "cannot open it to compare with the archive's file")
        }
        return same
    }

    /// Removes what `install` created, files before their folders.
    package static func remove(_ created: [URL]) {
        for url in created.reversed() { try? FileManager.default.removeItem(at: url) }
    }
}
