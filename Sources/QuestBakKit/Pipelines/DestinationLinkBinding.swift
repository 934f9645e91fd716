import CoreDataStore
import Foundation
import GRDB

/// The links of one to-many kept on its destination's row: the table and the column that holds
/// the source's `Z_PK` (`ModelLayout.LinkStorage.destinationColumn`), as `temp.questbak_links`
/// names them.
struct DestinationLinkGroup: Hashable {
    var table: String
    var column: String
}

/// Which groups of links the link step (`StatementRestore.applyDestinationLinks`) leaves alone.
enum DestinationLinkGroups {
    case none
    case some(Set<DestinationLinkGroup>)
    /// Every group: the step has nothing to do.
    case all
}

/// The links of one group in the order of their targets (then sources), read while the
/// destination's rows are inserted in the order of their keys, as an export writes a member:
/// a row takes the lowest source of the links that name it, and the reading moves past them.
///
/// *Why the link step may skip a group whose every link was taken* (`bound` equals the links
/// the group has). Each row takes at most one link and each link is taken at most once, by
/// the row its target names, a row that was stored (a row refused does not count), so every link
/// names a distinct row of the table. The step's join then reaches as many rows as there are
/// links and would set each to the one source that names it, which is what the row took: no
/// link is dropped, no entry logged, no value different. A link the reading passed (its target
/// was inserted before the link was read, or is not a row, or is named twice), or read after the
/// reading started, is not taken, and the group goes to the step, which sets every row a link is
/// left for, so a value a row took is overwritten: every row that took a link keeps one (a link
/// to a row is never dropped, but one of a higher source for the same row, which leaves the
/// lowest). After a row is refused nothing is skipped (`linkGroupsBoundOnInsert`).
final class DestinationLinkCursor {
    let group: DestinationLinkGroup
    private var rows: RowCursor?
    /// The group's links held in memory (`PendingLinks`), in the order the query gives them, and
    /// the next one's place.
    private var held: [PendingLinks.Link] = []
    private var heldIndex = 0
    private var next: (target: Int64, source: Int64)?
    /// Links taken by rows that were stored.
    var bound = 0

    init(_ db: Database, _ group: DestinationLinkGroup) throws {
        self.group = group
        rows = try Row.fetchCursor(
            db, sql: "SELECT target, source FROM temp.questbak_links WHERE tableName = ? AND columnName = ? ORDER BY target, source",
            arguments: [group.table, group.column])
        try advance()
    }

    /// The group's links as they stand, none of them in `temp.questbak_links` yet: sorted by
    /// target, then source, as the query above reads them from the table (where, once the
    /// reading began, a link written later is not read either).
    init(_ group: DestinationLinkGroup, held links: [PendingLinks.Link]) {
        self.group = group
        held = links
        // Links come in their sources' order, and in an export's the targets ascend too: sorted already.
        if !held.isSorted() { held.sort() }
        next = held.first.map { ($0.target, $0.source) }
        heldIndex = 1
    }

    private func advance() throws {
        next = nil
        if rows == nil {
            if heldIndex < held.count { next = (held[heldIndex].target, held[heldIndex].source) }
            heldIndex += 1
            return
        }
        guard let row = try rows?.next() else {
            rows = nil
            return
        }
        // Written as integers (`RecordInserter.insert`); anything else is left to the link step.
        if case .int64(let target) = (row[0] as DatabaseValue).storage, case .int64(let source) = (row[1] as DatabaseValue).storage {
            next = (target, source)
        } else {
            next = (Int64.min, 0)
        }
    }

    /// The source of the first link that names `key`, read past every link to a lower target.
    func source(linkingTo key: Int64) throws -> Int64? {
        while let link = next, link.target < key { try advance() }
        guard let link = next, link.target == key else { return nil }
        try advance()
        return link.source
    }

    /// Resets the statement (the link step writes the table, and the restore drops it).
    func close() {
        rows = nil
        held = []
        next = nil
    }
}

/// The rows of `temp.questbak_links` while there are few of them (at most `limit`), held in
/// memory in the order they are written, not yet in the table: in an export's member order every
/// link is taken by its destination's row as it goes in (`DestinationLinkCursor`), and the table
/// is then never read. Each link went into the table, and the cursor sorted them back out of
/// it: a fifth of the transaction thread's time for another app's store whose steps are each
/// linked to their recipe.
///
/// *Why the outcome is the same.* The links are written to the table (`flush`), in the order
/// they came, before anything reads or changes the table: before a row a constraint refuses is
/// dropped (`UniqueConstraintRule` moves the links of a duplicate in the table), and once the
/// records are in, unless every group's links were taken on insert and the link step does
/// nothing (then no statement that changes the store reads the table: a repair that moves links
/// in it after the step changes nothing either way). A later link is then written to the table
/// as before. A cursor made while the links are held reads the links of its group written so
/// far, sorted as its query sorts them, which are the rows that query would read; so every row
/// takes the same link, and the table, once written, holds the same rows with the same rowids.
/// Past `limit` the links go to the table: SQLite's sorter, not memory that grows with the store
/// (24 bytes a link: 3 MB at most).
final class PendingLinks {
    struct Link: Comparable {
        var target: Int64
        var source: Int64

        static func < (lhs: Link, rhs: Link) -> Bool { (lhs.target, lhs.source) < (rhs.target, rhs.source) }
    }

    /// A group and the entity and relationship its links come from, as the table's row names them.
    struct Kind: Equatable {
        var group: DestinationLinkGroup
        var entity: String
        var relationship: String
    }

    static let limit = 131_072

    /// At most this many links are held (the tests make it small, to write them part way).
    let limit: Int
    private(set) var kinds: [Kind] = []
    private var links: [Link] = []
    private var linkKinds: [Int32] = []
    /// Once written to the table, every link is written there as it comes.
    private(set) var written = false

    init(limit: Int = PendingLinks.limit) {
        self.limit = limit
    }

    /// The number of `kind`, made the first time it is asked for.
    func number(of kind: Kind) -> Int {
        if let known = kinds.firstIndex(of: kind) { return known }
        kinds.append(kind)
        return kinds.count - 1
    }

    /// Holds the links from `source` to `targets` of kind `number`; false (holding none of them)
    /// when they would be more than `limit` or the links are written already.
    func hold(kind number: Int, source: Int64, targets: [Int64]) -> Bool {
        guard !written, links.count + targets.count <= limit else { return false }
        for target in targets {
            links.append(Link(target: target, source: source))
            linkKinds.append(Int32(number))
        }
        return true
    }

    /// The links of `group` held so far, in the order they came.
    func links(of group: DestinationLinkGroup) -> [Link] {
        let numbers = Set(kinds.indices.filter { kinds[$0].group == group }.map(Int32.init))
        return links.indices.filter { numbers.contains(linkKinds[$0]) }.map { links[$0] }
    }

    /// Writes the links held into the table, in the order they came, through `insert`
    /// (`INSERT INTO temp.questbak_links VALUES (?, ?, ?, ?, ?, ?)`); from here on each link goes there.
    func write(through insert: Statement) throws {
        guard !written else { return }
        written = true
        let names: [[StoredValue]] = kinds.map {
            [
                .text(Data($0.group.table.utf8)), .text(Data($0.group.column.utf8)), .text(Data($0.entity.utf8)),
                .text(Data($0.relationship.utf8)),
            ]
        }
        for (link, number) in zip(links, linkKinds) {
            let kind = names[Int(number)]
            try ExactSQL.execute(insert, [kind[0], kind[1], .integer(link.target), .integer(link.source), kind[2], kind[3]])
        }
        links = []
        linkKinds = []
    }
}

extension Array where Element: Comparable {
    fileprivate func isSorted() -> Bool {
        indices.dropFirst().allSatisfy { self[$0 - 1] <= self[$0] }
    }
}

/// What one entity's rows take as they are inserted: a reader per group of links kept on its
/// table, and the insert of each set of them a row takes.
final class DestinationLinkBinding {
    let plan: ModelLayout.EntityPlan
    let insertColumns: [String]
    let cursors: [DestinationLinkCursor]
    /// By the bits of `cursors` whose link the row takes.
    private var inserts: [Int: Statement] = [:]

    init(plan: ModelLayout.EntityPlan, insertColumns: [String], cursors: [DestinationLinkCursor]) {
        self.plan = plan
        self.insertColumns = insertColumns
        self.cursors = cursors
    }

    /// The insert of the row's columns followed by the columns of the links it takes, in the
    /// order of `cursors`. (A row that takes none is inserted as before: a column it leaves out
    /// gets the column's default, not a null.)
    func insert(taking links: Int, db: Database) throws -> Statement {
        if let made = inserts[links] { return made }
        let columns = insertColumns + cursors.indices.filter { links & (1 << $0) != 0 }.map { cursors[$0].group.column }
        let made = try db.makeStatement(
            sql:
                "INSERT INTO \(plan.table.quotedSQLIdentifier) (\(columns.map(\.quotedSQLIdentifier).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
        )
        inserts[links] = made
        return made
    }

    /// The row that took `links` was stored.
    func stored(_ links: Int) {
        for (index, cursor) in cursors.enumerated() where links & (1 << index) != 0 { cursor.bound += 1 }
    }

    /// Whether a row may take the group's column when it is inserted rather than have it set
    /// afterwards with no other outcome: one row a key, and nothing an insert checks reads the
    /// column. Not in a table whose `Z_PK` is not its rowid, nor when the column is one of the
    /// row's own columns, is NOT NULL (the insert of a row without a link fails
    /// either way, but one with a link would not), is generated or the table has generated
    /// columns, is in a unique index or the table has a partial index or one on an expression (a
    /// conflict or an error at the insert instead of in the link step), the table has a CHECK
    /// constraint or a foreign key. (Triggers are off while a restore writes: `StatementReplay`.)
    static func takesLinksOnInsert(_ db: Database, _ group: DestinationLinkGroup, insertColumns: [String]) throws -> Bool {
        let column = group.column.uppercased()
        guard !insertColumns.contains(where: { $0.uppercased() == column }) else { return false }
        // A table whose `Z_PK` is not its rowid may hold a key twice: the link step sets both rows.
        guard try KeyRangeReaders.isKeyedByRowid(db, table: group.table) else { return false }
        let table = group.table.quotedSQLIdentifier
        let columns = try Row.fetchAll(db, sql: "PRAGMA table_xinfo(\(table))")
        guard let info = columns.first(where: { ($0["name"] as String?)?.uppercased() == column }), (info["notnull"] as Int?) == 0,
            !columns.contains(where: { ($0["hidden"] as Int? ?? 0) != 0 })
        else { return false }
        let sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [group.table])
        guard let sql, !sql.uppercased().contains("CHECK") else { return false }
        guard try Row.fetchAll(db, sql: "PRAGMA foreign_key_list(\(table))").isEmpty else { return false }
        for index in try Row.fetchAll(db, sql: "PRAGMA index_list(\(table))") {
            guard let name: String = index["name"] else { return false }
            let keyColumns = try Row.fetchAll(db, sql: "PRAGMA index_xinfo(\(name.quotedSQLIdentifier))").filter {
                ($0["key"] as Int?) == 1
            }
            // An expression's column number is -2.
            if keyColumns.contains(where: { ($0["cid"] as Int?) == -2 }) { return false }
            if (index["partial"] as Int?) != 0 { return false }
            let named = keyColumns.contains { ($0["name"] as String?)?.uppercased() == column }
            if named, (index["unique"] as Int?) != 0 { return false }
        }
        return true
    }
}
