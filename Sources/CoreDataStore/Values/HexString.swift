import Crypto

// Lowercase hex, as checksums are written in manifests and messages. In Values, below every
// layer that prints a digest or a hash (Store, Archive, Pipelines).
extension Sequence where Element == UInt8 {
    package var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var output: [UInt8] = []
        for byte in self {
            output.append(digits[Int(byte >> 4)])
            output.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: output, as: UTF8.self)
    }
}

extension SHA256.Digest {
    package var hexString: String { Array(self).hexString }
}
