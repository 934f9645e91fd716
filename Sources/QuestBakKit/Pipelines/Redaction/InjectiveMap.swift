import CoreDataStore
import QuestBakArchive

/// Replacements that keep equal values equal and different values different: each original gets
/// its replacement once, and a candidate another original already has is refused and the next
/// candidate tried (counted as a collision). The candidate function must eventually offer a free
/// value (text and bytes are lengthened after a few tries); nil means it has none left.
struct InjectiveMap<Original: Hashable, Replacement: Hashable> {
    private var forward: [Original: Replacement] = [:]
    private var taken: Set<Replacement> = []
    /// Candidates refused because another original had them.
    private(set) var collisions = 0
    /// Whether a replacement equal to its original is refused too (text, UUIDs and bytes, whose
    /// originals must not survive; not numbers, whose range may have no other free value).
    var refusesIdentity: Bool

    init(refusesIdentity: Bool) { self.refusesIdentity = refusesIdentity }

    var count: Int { forward.count }

    mutating func replacement(
        for original: Original, identity: Replacement? = nil, candidate: (Int) -> Replacement?
    ) throws -> Replacement {
        if let known = forward[original] { return known }
        var attempt = 0
        while true {
            guard let value = candidate(attempt) else {
                throw RedactionError.collision("no free replacement is left for one value after \(attempt) tries")
            }
            let isIdentity = refusesIdentity && value == identity
            if !taken.contains(value) && !isIdentity {
                forward[original] = value
                taken.insert(value)
                return value
            }
            if !isIdentity { collisions += 1 }
            attempt += 1
        }
    }
}
