import hashlib
import random

from Crypto.Cipher import AES, DES


def password_hash(password):
    return hashlib.md5(password.encode()).hexdigest()  # vuln: python.crypto.weak-hash


def encrypt(key, data):
    return AES.new(key, AES.MODE_ECB).encrypt(data)  # vuln: python.crypto.weak-cipher


def legacy(key, data):
    return DES.new(key, DES.MODE_CBC).encrypt(data)  # vuln: python.crypto.weak-cipher


def reset_token():
    token = "".join(random.choice("abcdef0123456789") for _ in range(32))  # vuln: python.crypto.weak-random
    return token
