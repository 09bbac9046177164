// What Apache Hudi 1.1.1's own HFile reader (org.apache.hudi.io.hfile) reads from an HFile:
// the entry count, a SHA-256 over every (key, value) in scan order, the first and last keys,
// and the value (hex) of each looked-up key (null when absent).
// For tests/spark/hfile_multilevel.sh. Usage: java HudiHFileRead HFILE KEY...
import org.apache.hudi.common.util.io.ByteBufferBackedInputStream;
import org.apache.hudi.io.ByteArraySeekableDataInputStream;
import org.apache.hudi.io.hfile.HFileReader;
import org.apache.hudi.io.hfile.HFileReaderImpl;
import org.apache.hudi.io.hfile.KeyValue;
import org.apache.hudi.io.hfile.UTF8StringKey;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;

public class HudiHFileRead {
  static String hex(byte[] b, int off, int len) {
    StringBuilder s = new StringBuilder();
    for (int i = off; i < off + len; i++) s.append(String.format("%02x", b[i] & 0xff));
    return s.toString();
  }

  static HFileReader open(byte[] bytes) throws Exception {
    HFileReader r = new HFileReaderImpl(
        new ByteArraySeekableDataInputStream(new ByteBufferBackedInputStream(bytes)), bytes.length);
    r.initializeMetadata();
    return r;
  }

  static String key(KeyValue kv) {
    return new String(kv.getBytes(), kv.getKeyContentOffset(), kv.getKeyContentLength(),
        StandardCharsets.UTF_8);
  }

  public static void main(String[] args) throws Exception {
    byte[] bytes = Files.readAllBytes(Paths.get(args[0]));
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    List<String> keys = new ArrayList<>();
    long n = 0;
    try (HFileReader r = open(bytes)) {
      if (r.seekTo()) {
        do {
          KeyValue kv = r.getKeyValue().get();
          byte[] b = kv.getBytes();
          // Each cell as key length, key, value length, value (lengths u32 big-endian).
          sha.update(ByteBuffer.allocate(4).putInt(kv.getKeyContentLength()).array());
          sha.update(b, kv.getKeyContentOffset(), kv.getKeyContentLength());
          sha.update(ByteBuffer.allocate(4).putInt(kv.getValueLength()).array());
          sha.update(b, kv.getValueOffset(), kv.getValueLength());
          keys.add(key(kv));
          n++;
        } while (r.next());
      }
      StringBuilder out = new StringBuilder("{\"entries\":" + n + ",\"declared_entries\":"
          + r.getNumKeyValueEntries() + ",\"sha256\":\"" + hex(sha.digest(), 0, 32) + "\"");
      out.append(",\"first_keys\":[");
      for (int i = 0; i < Math.min(3, keys.size()); i++) out.append(i > 0 ? "," : "").append('"' + keys.get(i) + '"');
      out.append("],\"last_keys\":[");
      for (int i = Math.max(0, keys.size() - 3); i < keys.size(); i++)
        out.append(i > Math.max(0, keys.size() - 3) ? "," : "").append('"' + keys.get(i) + '"');
      out.append("],\"lookups\":{");
      for (int i = 1; i < args.length; i++) {
        // A fresh reader per key, positioned at the start first: seekTo only moves forward.
        try (HFileReader l = open(bytes)) {
          l.seekTo();
          int found = l.seekTo(new UTF8StringKey(args[i]));
          String value = "null";
          if (found == HFileReader.SEEK_TO_FOUND) {
            KeyValue kv = l.getKeyValue().get();
            value = '"' + hex(kv.getBytes(), kv.getValueOffset(), kv.getValueLength()) + '"';
          }
          out.append(i > 1 ? "," : "").append('"' + args[i] + "\":" + value);
        }
      }
      System.out.println(out.append("}}"));
    }
  }
}
