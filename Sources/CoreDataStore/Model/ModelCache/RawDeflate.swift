import CZlib
import Foundation

/// Raw DEFLATE (RFC 1951: no zlib header, no checksum; zlib's window bits −15), the compression
/// of `Z_MODELCACHE.Z_CONTENT`. Every zlib call of the package is in this file.
///
/// Inflating runs on bytes taken from stores that may be damaged or hostile: the output is
/// bounded (a few bytes of DEFLATE can ask for gigabytes), and a stream that stops before its
/// final block, or carries bytes after it, is refused rather than returned in part.
package enum RawDeflate {
    /// The most bytes `inflate` produces unless told otherwise: real model caches are tens of KiB.
    package static let defaultOutputLimit = 64 << 20

    package enum Failure: Error, LocalizedError, Equatable, Sendable {
        /// The stream is not valid DEFLATE (zlib's message, and the input offset it stopped at).
        case damaged(reason: String, inputOffset: Int)
        /// The input ends before the stream's final block.
        case truncated(inputLength: Int, producedBytes: Int)
        /// Bytes follow the end of the stream.
        case trailingBytes(count: Int)
        /// The stream expands past the limit.
        case outputLimitExceeded(limit: Int)
        /// zlib itself failed (no memory, version mismatch): not a property of the input.
        case zlib(function: String, code: Int32)

        package var errorDescription: String? {
            switch self {
            case .damaged(let reason, let offset): "damaged DEFLATE stream at input byte \(offset): \(reason)"
            case .truncated(let length, let produced):
                "DEFLATE stream ends early: \(length) input bytes gave \(produced) bytes and no final block"
            case .trailingBytes(let count): "\(count) bytes follow the end of the DEFLATE stream"
            case .outputLimitExceeded(let limit): "DEFLATE stream expands past \(limit) bytes"
            case .zlib(let function, let code): "zlib \(function) failed with code \(code)"
            }
        }
    }

    /// Inflates a complete raw DEFLATE stream.
    package static func inflate(_ input: Data, outputLimit: Int = defaultOutputLimit) throws(Failure) -> Data {
        var stream = z_stream()
        let initStatus = inflateInit2_(&stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard initStatus == Z_OK else { throw .zlib(function: "inflateInit2", code: initStatus) }
        defer { inflateEnd(&stream) }

        var output = Data()
        let chunkSize = 64 << 10
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        var inputBytes = [UInt8](input)
        let inputCount = inputBytes.count
        var failure: Failure?
        inputBytes.withUnsafeMutableBufferPointer { inputBuffer in
            stream.next_in = inputBuffer.baseAddress
            stream.avail_in = uInt(inputCount)
            while true {
                let (status, produced): (Int32, Int) = chunk.withUnsafeMutableBufferPointer { chunkBuffer in
                    stream.next_out = chunkBuffer.baseAddress
                    stream.avail_out = uInt(chunkSize)
                    let status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    return (status, chunkSize - Int(stream.avail_out))
                }
                if produced > 0 {
                    guard produced <= outputLimit - output.count else {
                        failure = .outputLimitExceeded(limit: outputLimit)
                        return
                    }
                    output.append(contentsOf: chunk[0..<produced])
                }
                let consumed = inputCount - Int(stream.avail_in)
                switch status {
                case Z_STREAM_END:
                    if stream.avail_in > 0 { failure = .trailingBytes(count: Int(stream.avail_in)) }
                    return
                case Z_OK:
                    continue
                case Z_BUF_ERROR:
                    // No progress possible: all input consumed and the stream is not finished.
                    failure = .truncated(inputLength: inputCount, producedBytes: output.count)
                    return
                case Z_DATA_ERROR, Z_NEED_DICT:
                    let message = stream.msg.map { String(cString: $0) } ?? (status == Z_NEED_DICT ? "needs a dictionary" : "invalid data")
                    failure = .damaged(reason: message, inputOffset: consumed)
                    return
                default:
                    failure = .zlib(function: "inflate", code: status)
                    return
                }
            }
        }
        if let failure { throw failure }
        return output
    }

    /// Deflates `input` as one raw DEFLATE stream (for fixtures and tests).
    package static func deflate(_ input: Data, level: Int32 = Z_DEFAULT_COMPRESSION) throws(Failure) -> Data {
        var stream = z_stream()
        let initStatus = deflateInit2_(
            &stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard initStatus == Z_OK else { throw .zlib(function: "deflateInit2", code: initStatus) }
        defer { deflateEnd(&stream) }

        var inputBytes = [UInt8](input)
        let inputCount = inputBytes.count
        let bound = Int(deflateBound(&stream, uLong(inputCount)))
        var output = [UInt8](repeating: 0, count: bound)
        var status: Int32 = Z_OK
        inputBytes.withUnsafeMutableBufferPointer { inputBuffer in
            output.withUnsafeMutableBufferPointer { outputBuffer in
                stream.next_in = inputBuffer.baseAddress
                stream.avail_in = uInt(inputCount)
                stream.next_out = outputBuffer.baseAddress
                stream.avail_out = uInt(bound)
                status = CZlib.deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { throw .zlib(function: "deflate", code: status) }
        return Data(output[0..<Int(stream.total_out)])
    }
}
