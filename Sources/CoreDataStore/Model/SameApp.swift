import Foundation

/// Whether two stores (or archives) are of one app. A Core Data store names no app: its metadata
/// holds model hashes and version identifiers, which change with every version of one app. So the
/// model decides: two stores are of one app when their entities have a name in common. A new
/// version of an app keeps its entities' names (a lightweight migration maps entities by name;
/// a rename keeps the old name as `originalName`), while the stores of two different apps rarely
/// share one. `diff` and `import --merge` refuse stores of two apps rather than list every record
/// as added and removed, or call the two apps' models an older and a newer version.
package enum SameApp {
    package static func check(_ a: some Sequence<String>, _ b: some Sequence<String>) -> Bool {
        !Set(a).isDisjoint(with: b)
    }

    /// One sentence for two stores of different apps.
    package static func difference(_ a: (path: String, entities: [String]), _ b: (path: String, entities: [String])) -> String {
        "\(a.path) and \(b.path) are not the same app: they have no entity in common (\(list(a.entities)); \(list(b.entities)))"
    }

    package static func list(_ names: [String]) -> String {
        let sorted = Set(names).sorted()
        guard !sorted.isEmpty else { return "no entities" }
        return sorted.prefix(8).joined(separator: ", ") + (sorted.count > 8 ? ", … (\(sorted.count) in all)" : "")
    }
}
