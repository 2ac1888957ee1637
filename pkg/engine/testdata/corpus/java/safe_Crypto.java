// safe: java.crypto.weak-hash java.crypto.weak-cipher java.crypto.weak-random
package com.example.security;

import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Random;
import javax.crypto.Cipher;

public class CryptoUtil {
    private final SecureRandom random = new SecureRandom();

    public byte[] hashContent(byte[] content) throws Exception {
        return MessageDigest.getInstance("SHA-256").digest(content);
    }

    public Cipher cipher() throws Exception {
        return Cipher.getInstance("AES/GCM/NoPadding");
    }

    public String resetToken() {
        byte[] token = new byte[32];
        random.nextBytes(token);
        return java.util.HexFormat.of().formatHex(token);
    }

    public int shuffleSeed() {
        return new Random().nextInt(100);
    }
}
