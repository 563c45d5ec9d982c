// A test KMS for parquet-java's PropertiesDrivenCryptoFactory, compiled by
// tests/parquet/test_crypto.py at test time (pyspark's jars do not ship parquet-java's
// test-only org.apache.parquet.crypto.keytools.mocks.InMemoryKMS).
//
// Same behaviour as that mock: master keys come from the Hadoop property
// "parquet.encryption.key.list" ("id1:base64key1, id2:base64key2"); a key is wrapped by
// AES-GCM with the master key and the master key id (UTF-8) as AAD, and written as base64
// of nonce + ciphertext + tag (KeyToolkit.encryptKeyLocally). bloomskip's
// keytools.InMemoryKms wraps the same way, so files written by either can be read by both.
package bloomskip.testkms;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.crypto.KeyAccessDeniedException;
import org.apache.parquet.crypto.keytools.KeyToolkit;
import org.apache.parquet.crypto.keytools.KmsClient;

public class BloomskipTestKms implements KmsClient {
  private final Map<String, byte[]> masterKeys = new HashMap<>();

  @Override
  public void initialize(Configuration conf, String kmsInstanceID, String kmsInstanceURL, String accessToken) {
    for (String entry : conf.getTrimmedStrings("parquet.encryption.key.list")) {
      int colon = entry.indexOf(':');
      if (colon <= 0) {
        throw new IllegalArgumentException("bad key list entry: " + entry);
      }
      masterKeys.put(entry.substring(0, colon).trim(), Base64.getDecoder().decode(entry.substring(colon + 1).trim()));
    }
  }

  private byte[] master(String id) throws KeyAccessDeniedException {
    byte[] key = masterKeys.get(id);
    if (key == null) {
      throw new KeyAccessDeniedException("no master key " + id);
    }
    return key;
  }

  @Override
  public String wrapKey(byte[] keyBytes, String masterKeyIdentifier) throws KeyAccessDeniedException {
    return KeyToolkit.encryptKeyLocally(keyBytes, master(masterKeyIdentifier),
        masterKeyIdentifier.getBytes(StandardCharsets.UTF_8));
  }

  @Override
  public byte[] unwrapKey(String wrappedKey, String masterKeyIdentifier) throws KeyAccessDeniedException {
    return KeyToolkit.decryptKeyLocally(wrappedKey, master(masterKeyIdentifier),
        masterKeyIdentifier.getBytes(StandardCharsets.UTF_8));
  }
}
