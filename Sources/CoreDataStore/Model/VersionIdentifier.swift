/// Comparing `VersionedSchema.versionIdentifier`s as versions: dotted whole numbers, a missing
/// component counting as zero, so "1.0" and "1.0.0" are one version and "1.10.0" is newer than
/// "1.9.0". Anything else ("1.0.0 ", "beta", "") is no version at all: it is never "newer", so an
/// unknown identifier is reported as unknown rather than as a reason to upgrade questbak.
package enum VersionIdentifier {
    /// The numeric components, or nil when `text` is not dotted whole numbers.
    static func components(_ text: String) -> [Int]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        var numbers: [Int] = []
        for part in parts {
            guard !part.isEmpty, part.utf8.allSatisfy({ (48...57).contains($0) }), let number = Int(part) else { return nil }
            numbers.append(number)
        }
        return numbers
    }

    /// Whether both are versions and `version` is the later one.
    public static func isNewer(_ version: String, than other: String) -> Bool {
        guard var lhs = components(version), var rhs = components(other) else { return false }
        let width = max(lhs.count, rhs.count)
        lhs += Array(repeating: 0, count: width - lhs.count)
        rhs += Array(repeating: 0, count: width - rhs.count)
        return rhs.lexicographicallyPrecedes(lhs)
    }

    /// Whether `version` is newer than every one of `known`: then a newer questbak may know it.
    public static func isNewer(_ version: String, thanAll known: [String]) -> Bool {
        !known.isEmpty && known.allSatisfy { isNewer(version, than: $0) }
    }
}
