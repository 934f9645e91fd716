import CoreDataStore
import Foundation
import GRDB

extension Differ {
    /// Whether two store snapshots are the same bytes, so that one read of either stands for
    /// both: `diff` of a store and its copy reads only A, and B's side is A's.
    ///
    /// Why that gives B's side exactly: a store side is what `Exporter.records(of:)` makes of a
    /// snapshot, the manifest and the lines of each entity member, and those are a function of
    /// what SQLite reads from the snapshot's files (its main file and its WAL, copied as they
    /// were) and of the options, which are the same for both sides but for the progress step's
    /// name. Equal files give equal reads. The one thing an export reads beside the store is its
    /// support folder (external-storage files, staged as file members, which a side does not
    /// use); it is read from the source's folder, so a store with one, on either side, is read
    /// as before, and any error reading it is met as before.
    ///
    /// Two stores whose bytes differ but whose content is the same (`sameContent`: a store and the
    /// one its archive restores) are one side too: what SQLite reads from their files differs
    /// only in where things lie, and nothing an export reads depends on that. A `VACUUM`ed copy
    /// is not taken for one: `VACUUM` moves the indexes after the tables in `sqlite_master`,
    /// whose order `sameContent` compares, so B is read.
    enum StoreBytes {
        static func same(_ a: StoreSnapshot, _ b: StoreSnapshot, cancellation: Cancellation? = nil) throws -> Bool {
            try compare(a, b, cancellation: cancellation).isSame
        }

        /// What `same` finds, and when the stores are not one side, which of their tables
        /// differ (`Verdict`).
        static func compare(_ a: StoreSnapshot, _ b: StoreSnapshot, cancellation: Cancellation? = nil) throws -> Verdict {
            for store in [a.sourceURL, b.sourceURL] {
                let support = ExternalStorage.supportFolder(forStore: store).path
                // Not followed when it is a link: anything there at all, and B is read.
                if (try? FileManager.default.attributesOfItem(atPath: support)) != nil {
                    return Verdict(isSame: false, tablesDiffering: nil)
                }
            }
            let main = (a.copyPath, b.copyPath)
            let wal = (a.copyPath + "-wal", b.copyPath + "-wal")
            if try sameFile(main.0, main.1) && sameFile(wal.0, wal.1) { return Verdict(isSame: true, tablesDiffering: nil) }
            defer {
                // The pages the comparison read are not needed again before A's read.
                a.database.releaseMemory()
                b.database.releaseMemory()
            }
            do {
                return try compareContent(a, b, cancellation: cancellation)
            } catch let cancelled as CancellationError {
                throw cancelled
            } catch {
                // A store SQLite cannot read here: not the same, and B is read, which says why.
                return Verdict(isSame: false, tablesDiffering: nil)
            }
        }

        /// Two stores compared: one content or not, and when not, what is known of where.
        struct Verdict: Equatable {
            var isSame: Bool
            /// When the settings and the schema are the same: tables found to differ in their
            /// rows (or an index's entries), not always every such table (`compareContent`); nil
            /// when anything may differ. A hint for `diff`'s reads only (`Differ.tableDiffers`),
            /// which the members' digests check as before: a wrong one costs time, never a line of
            /// the listing.
            var tablesDiffering: Set<String>?
        }

        /// Whether two databases hold the same content as SQLite returns it: the settings an
        /// export reads from the header (`StoreFileSettings`: the encoding, user version,
        /// application id, page size, auto-vacuum and journal mode), the schema (every entry of
        /// `sqlite_master`, its type, names and SQL, in rowid order; not `rootpage`, which is
        /// where its b-tree starts, nor the rowid, which `VACUUM` renumbers), and every b-tree's entries: each table's rows with their
        /// rowids in rowid order, and each index's keys and rowids in the index's order (read
        /// through the index). Every value is compared as SQLite holds it (`ExactSQL.sameRows`).
        /// A query's answer is a function of those (the schema and the statistics tables, which
        /// are tables here, choose its plan; the rows and the index entries it reads give its
        /// rows), so two such databases answer every query an export asks alike, though their
        /// pages differ. What differs then (page numbers, free space, the file's change counter)
        /// only `rootpage`, `PRAGMA page_count`, `freelist_count` or `dbstat` would show, and
        /// nothing in questbak reads them. Whatever this cannot read the same way (a virtual
        /// table, a table without a rowid, an index on an expression or of some rows, a database
        /// not UTF-8) answers no, and B is read as before.
        ///
        /// The b-trees are compared on two threads, each with a connection to either snapshot
        /// (the snapshots' own, and one more read-only each), in parts: an index, or the rows of
        /// a table in one range of rowids (about `rowidsPerPart`; the ranges cut every integer
        /// into consecutive pieces, the same on both sides, so a table's rows are the same in
        /// rowid order exactly when each range's are). `cancellation` is checked between parts.
        static func sameContent(
            _ a: StoreSnapshot, _ b: StoreSnapshot, rowidsPerPart: UInt64 = 1 << 16, cancellation: Cancellation? = nil
        ) throws -> Bool {
            try compareContent(a, b, rowidsPerPart: rowidsPerPart, cancellation: cancellation).isSame
        }

        /// `sameContent`'s comparison, and where the content is not the same, tables found to
        /// differ (`Verdict.tablesDiffering`): the part that differed, and, of every other table
        /// not found to differ yet, its last range of rowids (`Parts`).
        static func compareContent(
            _ a: StoreSnapshot, _ b: StoreSnapshot, rowidsPerPart: UInt64 = 1 << 16, cancellation: Cancellation? = nil
        ) throws -> Verdict {
            guard
                let reads = try a.read({ left in
                    try b.read { right in try comparedReads(left, right, rowidsPerPart: rowidsPerPart) }
                })
            else { return Verdict(isSame: false, tablesDiffering: nil) }
            var configuration = StoreReader.besideConfiguration(readonly: true)
            configuration.foreignKeysEnabled = false
            let other = (
                try DatabaseQueue(path: a.copyPath, configuration: configuration),
                try DatabaseQueue(path: b.copyPath, configuration: configuration)
            )
            defer {
                try? other.0.close()
                try? other.1.close()
            }
            let connections = [(a.database, b.database), other]
            let parts = Parts(reads, cancellation: cancellation)
            DispatchQueue.concurrentPerform(iterations: connections.count) { worker in
                let (left, right) = connections[worker]
                parts.run { sql in
                    try left.read { left in
                        try right.read { right in
                            try ExactSQL.sameRows(try left.makeStatement(sql: sql), try right.makeStatement(sql: sql))
                        }
                    }
                }
            }
            return try parts.outcome()
        }

        /// One query `sameContent` compares: the rows of a table in a range of rowids, or an
        /// index's entries.
        struct Read {
            var sql: String
            var table: String
            /// The rows of the table's last range of rowids: still read once another part
            /// differed, to tell whether this table differs too (where a store grows and is
            /// edited most), at the cost of one range of each table.
            var isLastRange: Bool
        }

        /// Parts of a comparison taken in order by the threads that compare them, until one
        /// fails. Once one differs, only the last range of each table not found to differ yet is
        /// read (the stores are not the same; what is read after only names tables that differ,
        /// a hint, and a bounded one: at most one range more of each table, which is the whole of
        /// a table of one range, such as a history table `diff` never uses).
        private final class Parts: @unchecked Sendable {
            private let lock = NSLock()
            private let reads: [Read]
            private let cancellation: Cancellation?
            // Guarded by `lock`.
            private var next = 0
            private var differing: Set<String> = []
            private var failure: Error?

            init(_ reads: [Read], cancellation: Cancellation?) {
                self.reads = reads
                self.cancellation = cancellation
            }

            func run(_ same: (String) throws -> Bool) {
                while true {
                    lock.lock()
                    while next < reads.count, !differing.isEmpty, differing.contains(reads[next].table) || !reads[next].isLastRange {
                        next += 1
                    }
                    guard next < reads.count, failure == nil else {
                        lock.unlock()
                        return
                    }
                    let read = reads[next]
                    next += 1
                    lock.unlock()
                    do {
                        try cancellation?.check()
                        if try !same(read.sql) { finish(differing: read.table, failure: nil) }
                    } catch {
                        finish(differing: nil, failure: error)
                    }
                }
            }

            private func finish(differing table: String?, failure: Error?) {
                lock.lock()
                defer { lock.unlock() }
                if let table { differing.insert(table) }
                if let failure, self.failure == nil { self.failure = failure }
            }

            /// Whether every part was the same, and the tables that differ; a part's error when one failed.
            func outcome() throws -> Verdict {
                lock.lock()
                defer { lock.unlock() }
                if let failure { throw failure }
                return Verdict(isSame: differing.isEmpty, tablesDiffering: differing.isEmpty ? nil : differing)
            }
        }

        /// The queries whose rows, the same on both sides, make two databases the same content
        /// (`sameContent`); nil when the settings or the schema differ, or when something cannot
        /// be read alike.
        private static func comparedReads(_ left: Database, _ right: Database, rowidsPerPart: UInt64) throws -> [Read]? {
            func same(_ sql: String) throws -> Bool {
                try ExactSQL.sameRows(try left.makeStatement(sql: sql), try right.makeStatement(sql: sql))
            }
            let settings = ["encoding", "user_version", "application_id", "page_size", "auto_vacuum", "journal_mode"]
            guard try settings.allSatisfy({ try same("PRAGMA \($0)") }),
                try String.fetchOne(left, sql: "PRAGMA encoding") == "UTF-8",
                try same("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid")
            else { return nil }
            // The schema is the same on both sides: what it names is read from the left.
            var reads: [Read] = []
            for table in try Row.fetchAll(left, sql: "SELECT name, type, wr FROM pragma_table_list WHERE schema = 'main'") {
                let name: String = table["name"]
                // The schema was compared above; a view is its SQL.
                guard name != "sqlite_schema", table["type"] as String != "view" else { continue }
                guard table["type"] as String == "table", table["wr"] as Int == 0, let rowid = try rowidName(of: name, left) else {
                    return nil
                }
                let rows = "SELECT \(rowid), * FROM main.\(name.quotedSQLIdentifier)"
                let ends = try Row.fetchOne(left, sql: "SELECT min(\(rowid)), max(\(rowid)) FROM main.\(name.quotedSQLIdentifier)")
                let cuts = rowidCuts(from: ends?[0], to: ends?[1], every: rowidsPerPart)
                for (index, cut) in ([nil] + cuts).enumerated() {
                    let below = index < cuts.count ? "\(rowid) < \(cuts[index])" : nil
                    let range = [cut.map { "\(rowid) >= \($0)" }, below].compactMap { $0 }
                    let sql = rows + (range.isEmpty ? "" : " WHERE " + range.joined(separator: " AND ")) + " ORDER BY \(rowid)"
                    reads.append(Read(sql: sql, table: name, isLastRange: index == cuts.count))
                }
                for index in try Row.fetchAll(left, sql: "SELECT name, partial FROM pragma_index_list(?)", arguments: [name]) {
                    guard index["partial"] as Int == 0, let read = try indexRead(of: index["name"], on: name, rowid: rowid, left) else {
                        return nil
                    }
                    reads.append(Read(sql: read, table: name, isLastRange: false))
                }
            }
            return reads
        }

        /// Where the rowids from `low` to `high` are cut into ranges of `every` (at most about
        /// 64 ranges: sparse rowids make larger ones); none when the table is empty.
        static func rowidCuts(from low: Int64?, to high: Int64?, every: UInt64) -> [Int64] {
            guard let low, let high, high >= low else { return [] }
            // The spread as unsigned, exact even from a negative rowid to a positive one.
            let spread = UInt64(bitPattern: high &- low)
            let step = max(every, spread / 64 + 1)
            var cuts: [Int64] = []
            var offset: UInt64 = 0
            while spread - offset >= step {
                offset += step
                cuts.append(low &+ Int64(bitPattern: offset))
            }
            return cuts
        }

        /// The name a table's rowid goes by in a query: one of SQLite's three no column of it takes.
        private static func rowidName(of table: String, _ db: Database) throws -> String? {
            let columns = Set(
                try String.fetchAll(db, sql: "SELECT name FROM pragma_table_xinfo(?)", arguments: [table]).map { $0.lowercased() })
            return ["rowid", "_rowid_", "oid"].first { !columns.contains($0) }
        }

        /// A query of an index's entries, its columns and the rowid in the index's own order,
        /// through the index (`INDEXED BY`); nil for an index on an expression.
        private static func indexRead(of index: String, on table: String, rowid: String, _ db: Database) throws -> String? {
            var columns: [String] = []
            var order: [String] = []
            for column in try Row.fetchAll(
                db, sql: "SELECT cid, name, \"desc\", coll FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno", arguments: [index])
            {
                guard column["cid"] as Int >= 0, let name = column["name"] as String? else { return nil }
                let collation = (column["coll"] as String? ?? "BINARY").quotedSQLIdentifier
                let direction = column["desc"] as Int == 1 ? "DESC" : "ASC"
                columns.append(name.quotedSQLIdentifier)
                order.append("\(name.quotedSQLIdentifier) COLLATE \(collation) \(direction)")
            }
            let read = (columns + [rowid]).joined(separator: ", ")
            let through = "main.\(table.quotedSQLIdentifier) INDEXED BY \(index.quotedSQLIdentifier)"
            return "SELECT \(read) FROM \(through) ORDER BY \((order + [rowid]).joined(separator: ", "))"
        }

        /// Whether the files at the two paths hold the same bytes (both absent: the same).
        static func sameFile(_ first: String, _ second: String) throws -> Bool {
            let manager = FileManager.default
            let (hasFirst, hasSecond) = (manager.fileExists(atPath: first), manager.fileExists(atPath: second))
            guard hasFirst, hasSecond else { return hasFirst == hasSecond }
            // (A file that cannot be opened: not the same, and B is read, which says why.)
            return try FileBytes.same(first, second) ?? false
        }
    }
}
