package com.example.security;

import javax.crypto.Cipher;
import javax.crypto.KeyGenerator;
import javax.crypto.SecretKey;
import org.apache.commons.codec.digest.DigestUtils;

public class LegacyCrypto {
    public byte[] seal(byte[] data) throws Exception {
        SecretKey key = KeyGenerator.getInstance("DES").generateKey(); // vuln: java.crypto.weak-key-algorithm
        Cipher c = Cipher.getInstance("DESede/CBC/PKCS5Padding", "SunJCE"); // vuln: java.crypto.weak-cipher
        c.init(Cipher.ENCRYPT_MODE, key);
        return c.doFinal(data);
    }

    public String fingerprint(String text) {
        return DigestUtils.md5Hex(text); // vuln: java.crypto.weak-hash-digest-utils
    }

    public javax.crypto.Cipher simple() throws Exception {
        String mode = "AES";
        return Cipher.getInstance(mode); // vuln: java.crypto.weak-cipher
    }
}
