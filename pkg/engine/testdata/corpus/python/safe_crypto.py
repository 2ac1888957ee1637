# safe: python.crypto.weak-hash python.crypto.weak-cipher python.crypto.weak-random
import hashlib
import random
import secrets

from Crypto.Cipher import AES


def password_hash(password, salt):
    return hashlib.pbkdf2_hmac("sha256", password.encode(), salt, 600000)


def etag(content):
    return hashlib.md5(content, usedforsecurity=False).hexdigest()


def encrypt(key, data):
    cipher = AES.new(key, AES.MODE_GCM)
    return cipher.nonce, cipher.encrypt_and_digest(data)


def reset_token():
    return secrets.token_urlsafe(32)


def shuffle_tiles(tiles):
    random.shuffle(tiles)
    return random.choice(tiles)
