import Foundation

extension Differ.CloudIDCensus {
    /// Whether a well-formed value this census counted may also be one `other` counted: false
    /// only when none can be, decided from the two `hashes` logs without reading a row.
    ///
    /// Why "false" is exact: every well-formed value of a table is hashed into its log, by the
    /// FNV-1a hash of its UTF-8 bytes, which are the bytes SQL compares (`DiffValue.encode` stores
    /// the string's UTF-8 as TEXT, compared as BINARY). Two equal values have equal hashes, so
    /// when no hash of one log is in the other, no value is on both sides. A side without a
    /// well-formed value shares none. (A log missing where values were counted: "may".)
    ///
    /// Memory stays bounded at any size: the smaller log's hashes are held in rounds, each the
    /// hashes of one residue modulo the rounds (equal hashes share a round), about
    /// `hashesPerRound` at a time, sorted in an array (8 bytes a hash, half what a `Set` takes)
    /// and indexed by bucket as the merge's suspects are (`SuspectHashes.BucketIndex`), and the
    /// larger log is read once a round, its hashes of that residue looked up in it. A hash found
    /// in both ends it at once. (A test makes the rounds small.)
    func mayShareAValue(with other: Self, hashesPerRound: Int = Self.suspectLimit) throws -> Bool {
        guard wellFormed > 0, other.wellFormed > 0 else { return false }
        guard let mine = hashes, let theirs = other.hashes else { return true }
        let (held, read) = mine.count <= theirs.count ? (mine, theirs) : (theirs, mine)
        let rounds = UInt64(max((held.count + hashesPerRound - 1) / hashesPerRound, 1))
        struct Found: Error {}
        var heldHashes: [UInt64] = []
        heldHashes.reserveCapacity(min(held.count, hashesPerRound + hashesPerRound / 8))
        do {
            for round in 0..<rounds {
                heldHashes.removeAll(keepingCapacity: true)
                try held.forEachHash { hash in
                    if hash % rounds == round { heldHashes.append(hash) }
                }
                let index = SuspectHashes.BucketIndex(sorting: &heldHashes)
                try read.forEachHash { hash in
                    if hash % rounds == round, index.index(of: hash, in: heldHashes) != nil { throw Found() }
                }
            }
        } catch is Found {
            return true
        }
        return false
    }
}
