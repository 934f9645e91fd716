import Foundation

/// Base64 text as questbak writes it (`Data.base64EncodedString()`: the standard alphabet, `=`
/// padding to a multiple of four, no line breaks, the last digit's unused bits zero), read from
/// its bytes. By hand, not with Foundation, because the archive's reader needs only this one
/// spelling and had to prove it by decoding a `String` (`Data(base64Encoded:)`) and encoding the
/// bytes again to compare, three passes, two allocations and a `String` for each binary value
/// (docs/performance.md, "another app's import: base64 from the line's bytes"); here one pass.
package enum Base64Text {
    /// Each byte's 6-bit value in the standard alphabet; 0xFF for any byte not in it (`=` included).
    private static let digits: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(byte)] = UInt8(value)
        }
        return table
    }()

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
