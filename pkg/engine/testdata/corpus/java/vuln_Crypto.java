package com.example.security;

import java.security.MessageDigest;
import java.util.Random;
import javax.crypto.Cipher;

public class CryptoUtil {
    public byte[] hashPassword(String password) throws Exception {
        MessageDigest md = MessageDigest.getInstance("MD5"); // vuln: java.crypto.weak-hash
        return md.digest(password.getBytes());
    }

    public Cipher cipher() throws Exception {
        return Cipher.getInstance("AES/ECB/PKCS5Padding"); // vuln: java.crypto.weak-cipher
    }

    public String resetToken() {
        long token = new Random().nextLong(); // vuln: java.crypto.weak-random
        return Long.toHexString(token);
    }
}
