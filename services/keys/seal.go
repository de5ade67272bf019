package keys

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// errUnknownSealKey means a sealed secret names a master key this process
// does not hold (rotation without the previous key configured).
var errUnknownSealKey = errors.New("sealed with an unknown master key")

// sealer encrypts credential secrets with AES-256-GCM. Each sealed value
// records the id of the master key that sealed it, so after a rotation the
// old key can still be found; the associated data is the credential id, so
// a sealed value moved to another credential's row fails to open.
type sealer struct {
	current string                 // id of the key that seals
	aeads   map[string]cipher.AEAD // every key that can open, by id
}

// sealKeyID is the id of a master key: the first 8 hex characters of its
// SHA-256. It identifies the key without revealing it.
func sealKeyID(master []byte) string {
	sum := sha256.Sum256(master)
	return hex.EncodeToString(sum[:4])
}

// newSealer seals with master and can also open values sealed with any of
// previous.
func newSealer(master []byte, previous ...[]byte) (*sealer, error) {
	s := &sealer{aeads: map[string]cipher.AEAD{}}
	for i, k := range append([][]byte{master}, previous...) {
		if len(k) != MasterKeySize {
			return nil, fmt.Errorf("master key must be %d bytes, got %d", MasterKeySize, len(k))
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, fmt.Errorf("master key: %w", err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("master key: %w", err)
		}
		id := sealKeyID(k)
		if i == 0 {
			s.current = id
		}
		s.aeads[id] = aead
	}
	return s, nil
}

func associatedData(credentialID string) []byte {
	return []byte("perpgate/credential/" + credentialID)
}

// seal encrypts plaintext for the credential with a fresh random nonce.
func (s *sealer) seal(credentialID string, plaintext []byte) (Sealed, error) {
	aead := s.aeads[s.current]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return Sealed{}, fmt.Errorf("seal secret: read nonce: %w", err)
	}
	return Sealed{KeyID: s.current, Data: aead.Seal(nonce, nonce, plaintext, associatedData(credentialID))}, nil
}

// open decrypts a sealed secret of the credential. It fails when the master
// key is unknown, the data was altered, or it belongs to another credential.
func (s *sealer) open(credentialID string, v Sealed) ([]byte, error) {
	aead, ok := s.aeads[v.KeyID]
	if !ok {
		return nil, fmt.Errorf("open secret of credential %s: %w %q", credentialID, errUnknownSealKey, v.KeyID)
	}
	if len(v.Data) < aead.NonceSize()+aead.Overhead() {
		return nil, fmt.Errorf("open secret of credential %s: sealed data too short", credentialID)
	}
	n := aead.NonceSize()
	plain, err := aead.Open(nil, v.Data[:n], v.Data[n:], associatedData(credentialID))
	if err != nil {
		return nil, fmt.Errorf("open secret of credential %s: %w", credentialID, err)
	}
	return plain, nil
}
