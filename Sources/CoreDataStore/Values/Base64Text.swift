import Foundation

/// Base64 as questbak writes it (`Data.base64EncodedString()`: the standard alphabet, `=` padding
/// to a multiple of four, no line breaks, the last digit's unused bits zero), written into and
/// read from a record line's bytes without a `String` between. Foundation makes one each way:
/// export then copied its text into the line (and scanned it for characters to escape, though
/// base64 has none), and import decoded a `String` (`Data(base64Encoded:)`) and encoded the bytes
/// again to prove the spelling, three passes and two allocations for each binary value
/// (docs/performance.md, "another app's export: values without a `String`" and "another app's
/// import: base64 from the line's bytes"); here one pass each way.
///
/// Why by hand, not swift-extras-base64 (1.2.0, which encodes and decodes spans without a
/// `String` or an allocation): measured in its place, it cost more instructions both ways
/// (callgrind, another app's store at 100k: export 1.830 G → 1.838 G, its base64 43.7 M → 50.9 M,
/// from the calls around its loop; import 5.935 G → 5.959 G), and its decoder reads `AR==` as
/// `AQ==` and `AQ=D` as two bytes, so the canonical check would still be ours.
package enum Base64Text {
    /// The standard alphabet, each digit at its 6-bit value.
    private static let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

    /// Each byte's 6-bit value in `alphabet`; 0xFF for any byte not in it (`=` included).
    private static let digits: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, byte) in UnsafeBufferPointer(start: alphabet.utf8Start, count: alphabet.utf8CodeUnitCount).enumerated() {
            table[Int(byte)] = UInt8(value)
        }
        return table
    }()

    /// `bytes` in base64 appended to `output`, byte for byte `base64EncodedString()`.
    package static func append(_ bytes: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        let count = (bytes.count + 2) / 3 * 4
        guard count > 0 else { return }
        let digit = alphabet.utf8Start
        // Written into a buffer and appended once: an append per byte checked the line's
        // capacity and uniqueness for each.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { text in
            var index = 0
            var position = 0
            while index + 3 <= bytes.count {
                let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
                text[position] = digit[Int(group >> 18)]
                text[position + 1] = digit[Int(group >> 12 & 0x3F)]
                text[position + 2] = digit[Int(group >> 6 & 0x3F)]
                text[position + 3] = digit[Int(group & 0x3F)]
                index += 3
                position += 4
            }
            let left = bytes.count - index
            if left > 0 {
                // One or two bytes: two or three digits, then `=` to the group's four.
                let group = UInt32(bytes[index]) << 16 | (left == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
                text[position] = digit[Int(group >> 18)]
                text[position + 1] = digit[Int(group >> 12 & 0x3F)]
                text[position + 2] = left == 2 ? digit[Int(group >> 6 & 0x3F)] : UInt8(ascii: "=")
                text[position + 3] = UInt8(ascii: "=")
            }
            output.append(contentsOf: UnsafeBufferPointer(text))
        }
    }

    /// The bytes `text` spells when it is exactly what `base64EncodedString()` writes of them;
    /// nil for any other text (another alphabet, white space, padding missing or misplaced, a
    /// length that is no multiple of four, unused bits set), which the caller reads as it did.
    /// *Why nil for exactly the others:* `base64EncodedString()` writes each 3 bytes as 4 digits,
    /// and the last 1 or 2 bytes as 2 or 3 digits whose unused low bits are zero, then `=` to
    /// four; text of that shape is the encoding of the bytes its digits spell, no other text is.
    package static func canonicalBytes(_ text: UnsafeBufferPointer<UInt8>) -> Data? {
        let count = text.count
        guard count % 4 == 0 else { return nil }
        guard count > 0 else { return Data() }
        let padding = text[count - 1] != UInt8(ascii: "=") ? 0 : text[count - 2] != UInt8(ascii: "=") ? 1 : 2
        var data = Data(count: count / 4 * 3 - padding)
        let read = digits.withUnsafeBufferPointer { table in
            data.withUnsafeMutableBytes { raw -> Bool in
                let output = raw.bindMemory(to: UInt8.self)
                var bad: UInt8 = 0
                var out = 0
                var index = 0
                // Every group but the last: four digits, three bytes. A byte not in the alphabet
                // (0xFF) shows in `bad`'s high bits, checked once at the end.
                while index < count - 4 {
                    let a = table[Int(text[index])]
                    let b = table[Int(text[index + 1])]
                    let c = table[Int(text[index + 2])]
                    let d = table[Int(text[index + 3])]
                    bad |= a | b | c | d
                    output[out] = a << 2 | b >> 4
                    output[out + 1] = b << 4 | c >> 2
                    output[out + 2] = c << 6 | d
                    out += 3
                    index += 4
                }
                let a = table[Int(text[index])]
                let b = table[Int(text[index + 1])]
                bad |= a | b
                output[out] = a << 2 | b >> 4
                switch padding {
                case 0:
                    let c = table[Int(text[index + 2])]
                    let d = table[Int(text[index + 3])]
                    bad |= c | d
                    output[out + 1] = b << 4 | c >> 2
                    output[out + 2] = c << 6 | d
                case 1:
                    let c = table[Int(text[index + 2])]
                    // Two bytes: `c`'s low two bits are unused, and zero as written.
                    bad |= c | (c & 0x03 == 0 ? 0 : 0xFF)
                    output[out + 1] = b << 4 | c >> 2
                default:
                    // One byte: `b`'s low four bits are unused, and zero as written.
                    bad |= b & 0x0F == 0 ? 0 : 0xFF
                }
                return bad & 0xC0 == 0
            }
        }
        return read ? data : nil
    }
}
