// safe: java.crypto.weak-key-algorithm java.crypto.weak-cipher java.crypto.weak-hash-digest-utils
package com.example.security;

import javax.crypto.Cipher;
import javax.crypto.KeyGenerator;
import javax.crypto.SecretKey;
import org.apache.commons.codec.digest.DigestUtils;

public class ModernCrypto {
    public byte[] seal(byte[] data) throws Exception {
        SecretKey key = KeyGenerator.getInstance("AES").generateKey();
        Cipher c = Cipher.getInstance("AES/GCM/NoPadding", "SunJCE");
        c.init(Cipher.ENCRYPT_MODE, key);
        return c.doFinal(data);
    }

    public String fingerprint(String text) {
        return DigestUtils.sha256Hex(text);
    }
}
