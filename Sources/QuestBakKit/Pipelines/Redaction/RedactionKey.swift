import CoreDataStore
import Crypto
import Foundation
import QuestBakArchive

/// The secret every replacement is derived from (HMAC-SHA-256 keyed by it): the same key turns
/// the same value into the same replacement, in every table and every run, and without the key
/// a replacement says nothing about what it replaced.
package struct RedactionKey: Sendable {
    let key: SymmetricKey

    /// A key of the bytes of a key file, whatever they are (a passphrase, random bytes).
    public init(bytes: Data) throws {
        guard !bytes.isEmpty else { throw RedactionError.emptyKey }
        key = SymmetricKey(data: bytes)
    }

    /// A key no one knows: two runs give unrelated replacements.
    public static func random() -> RedactionKey { RedactionKey(key: SymmetricKey(size: .bits256)) }

    private init(key: SymmetricKey) { self.key = key }

    /// HMAC-SHA-256 of `parts`, each prefixed with its length so that no two lists of parts
    /// give the same message.
    func digest(_ purpose: String, _ parts: [Data]) -> [UInt8] {
        var code = HMAC<SHA256>(key: key)
        for part in [Data(purpose.utf8)] + parts {
            code.update(data: withUnsafeBytes(of: UInt64(part.count).bigEndian) { Data($0) })
            code.update(data: part)
        }
        return Array(code.finalize())
    }

    /// `count` bytes derived from `seed`: HMAC in counter mode.
    func stream(_ purpose: String, seed: Data, count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 32)
        var block: UInt64 = 0
        while bytes.count < count {
            bytes += digest(purpose, [seed, withUnsafeBytes(of: block.bigEndian) { Data($0) }])
            block += 1
        }
        return Array(bytes.prefix(count))
    }

    /// The one offset every date of a store is moved by: a whole number of weeks (so weekdays and
    /// times of day stay), between 1 and 520 weeks into the past.
    var dateOffset: Double {
        let bytes = digest("date-offset", [])
        let number = bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return -Double(1 + number % 520) * 7 * 86_400
    }

    /// The one factor every non-integer number is scaled by under number scrambling, between
    /// 0.5 and 1.5 (order and signs stay).
    var numberFactor: Double {
        let bytes = digest("number-factor", [])
        let number = bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return 0.5 + Double(number % 1_000_000) / 1_000_000
    }
}
