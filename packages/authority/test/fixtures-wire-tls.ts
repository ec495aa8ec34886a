/**
 * A self-signed test certificate for `localhost` and `127.0.0.1` (ECDSA P-256, valid 2026–2076) and
 * its key, generated once with `openssl req -x509` and kept here so the TLS test needs no tool at
 * run time. Test-only: the key is public and protects nothing.
 */

/** The certificate (PEM); also the CA a client trusts to reach the test server. */
export const TEST_TLS_CERT = `-----BEGIN CERTIFICATE-----
MIIBnDCCAUGgAwIBAgIUUmoeStfpSpEHPdGrzNFBWBOFpYgwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTIwMzA4NTYwOFoYDzIwNzYxMTIw
MDg1NjA4WjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAQzJDMq/A+X8zqdZHxkLWPyEfH3dmLyDbWCM6fHK/tp8LuLeEMYfei4
H3MiMWDwVhKIQuGGDl1hVjyDhX1oDCyqo28wbTAdBgNVHQ4EFgQUjA08ea7T4/Ew
U0MHY5ocdlvv94gwHwYDVR0jBBgwFoAUjA08ea7T4/EwU0MHY5ocdlvv94gwDwYD
VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARgglsb2NhbGhvc3SHBH8AAAEwCgYIKoZI
zj0EAwIDSQAwRgIhAOBKO4acZ4KtlwdE/y/VkFm15fRKKncdCRd6qXasqWKMAiEA
1dXqCX8L9bYBPhiPWD/UjDLfssQpaK8zy6AEWgjVwrE=
-----END CERTIFICATE-----
`

/** Its private key (PEM, PKCS #8). */
export const TEST_TLS_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgQJBCQCZb/TFElgDX
5nZqUYGM1dYkupO8pYq38NiaTeOhRANCAAQzJDMq/A+X8zqdZHxkLWPyEfH3dmLy
DbWCM6fHK/tp8LuLeEMYfei4H3MiMWDwVhKIQuGGDl1hVjyDhX1oDCyq
-----END PRIVATE KEY-----
`
