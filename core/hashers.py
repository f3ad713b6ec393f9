import hashlib
import hmac

from django.contrib.auth.hashers import BasePasswordHasher, mask_hash
from django.utils.crypto import constant_time_compare


class SecretSHA256Hasher(BasePasswordHasher):
    """Salted HMAC-SHA256 for long random machine secrets (OAuth client secrets).

    A slow hasher (PBKDF2) exists to slow down guessing of human passwords; a 256-bit random secret
    cannot be guessed, and a slow hash would add its whole cost to every token request.
    Never used for user passwords: it is last in PASSWORD_HASHERS, so only chosen by name.
    """

    algorithm = "secret_sha256"

    def encode(self, password, salt):
        self._check_encode_args(password, salt)
        digest = hmac.new(salt.encode(), password.encode(), hashlib.sha256).hexdigest()
        return f"{self.algorithm}${salt}${digest}"

    def decode(self, encoded):
        algorithm, salt, digest = encoded.split("$", 2)
        assert algorithm == self.algorithm
        return {"algorithm": algorithm, "hash": digest, "salt": salt}

    def verify(self, password, encoded):
        decoded = self.decode(encoded)
        return constant_time_compare(encoded, self.encode(password, decoded["salt"]))

    def safe_summary(self, encoded):
        decoded = self.decode(encoded)
        return {
            "algorithm": decoded["algorithm"],
            "salt": mask_hash(decoded["salt"]),
            "hash": mask_hash(decoded["hash"]),
        }

    def harden_runtime(self, password, encoded):
        pass

    def must_update(self, encoded):
        return False
