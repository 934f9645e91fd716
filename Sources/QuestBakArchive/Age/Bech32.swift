import CoreDataStore

/// Bech32 (BIP-173) as age uses it: no limit on the length of the data part, all lowercase or all
/// uppercase, with the checksum always computed over the lowercase form.
enum Bech32 {
    private static let alphabet = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)
    private static let values: [Int8] = {
        var table = [Int8](repeating: -1, count: 128)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = Int8(index) }
        return table
    }()

    /// `hrp` (lowercase) and `data` as a lowercase Bech32 string.
    static func encode(hrp: String, data: [UInt8]) -> String {
        let words = regroup(data, from: 8, to: 5, pad: true) ?? []
        let checksum = self.checksum(hrp: Array(hrp.utf8), words: words)
        return hrp + "1" + String(decoding: (words + checksum).map { alphabet[Int($0)] }, as: UTF8.self)
    }

    /// The lowercase human-readable part and the bytes of `text`, or nil when it is not valid
    /// Bech32 (mixed case, a character outside the alphabet, a wrong checksum, bad padding).
    static func decode(_ text: String) -> (hrp: String, data: [UInt8])? {
        let bytes = Array(text.utf8)
        guard bytes.allSatisfy({ (33...126).contains($0) }) else { return nil }
        let hasLower = bytes.contains { (97...122).contains($0) }
        let hasUpper = bytes.contains { (65...90).contains($0) }
        if hasLower && hasUpper { return nil }
        let lower = bytes.map { (65...90).contains($0) ? $0 + 32 : $0 }
        guard let separator = lower.lastIndex(of: UInt8(ascii: "1")), separator >= 1, lower.count - separator - 1 >= 6 else {
            return nil
        }
        let hrp = Array(lower[..<separator])
        var words: [UInt8] = []
        for character in lower[(separator + 1)...] {
            let value = values[Int(character)]
            guard value >= 0 else { return nil }
            words.append(UInt8(value))
        }
        guard polymod(expand(hrp) + words) == 1 else { return nil }
        guard let data = regroup(Array(words.dropLast(6)), from: 5, to: 8, pad: false) else { return nil }
        return (String(decoding: hrp, as: UTF8.self), data)
    }

    private static func polymod(_ values: [UInt8]) -> UInt32 {
        let generator: [UInt32] = [0x3b6a_57b2, 0x2650_8e6d, 0x1ea1_19fa, 0x3d42_33dd, 0x2a14_62b3]
        var checksum: UInt32 = 1
        for value in values {
            let top = checksum >> 25
            checksum = (checksum & 0x1ff_ffff) << 5 ^ UInt32(value)
            for bit in 0..<5 where (top >> UInt32(bit)) & 1 == 1 { checksum ^= generator[bit] }
        }
        return checksum
    }

    private static func expand(_ hrp: [UInt8]) -> [UInt8] {
        hrp.map { $0 >> 5 } + [0] + hrp.map { $0 & 31 }
    }

    private static func checksum(hrp: [UInt8], words: [UInt8]) -> [UInt8] {
        let value = polymod(expand(hrp) + words + [0, 0, 0, 0, 0, 0]) ^ 1
        return (0..<6).map { UInt8((value >> UInt32(5 * (5 - $0))) & 31) }
    }

    /// Regroups bits from `from`-bit to `to`-bit values. Decoding (`pad` false) refuses leftover
    /// bits that are a whole value or not zero, so each string has one decoding.
    private static func regroup(_ input: [UInt8], from: Int, to: Int, pad: Bool) -> [UInt8]? {
        var accumulator = 0
        var bits = 0
        var output: [UInt8] = []
        let mask = (1 << to) - 1
        for value in input {
            accumulator = (accumulator << from) | Int(value)
            bits += from
            while bits >= to {
                bits -= to
                output.append(UInt8((accumulator >> bits) & mask))
            }
            accumulator &= (1 << bits) - 1
        }
        if pad {
            if bits > 0 { output.append(UInt8((accumulator << (to - bits)) & mask)) }
        } else if bits >= from || accumulator != 0 {
            return nil
        }
        return output
    }
}
