// The team's identity provider for scripts/oauth_test.py: oidc-provider (a
// certified OpenID provider implementation, version pinned there) on
// loopback, with one confidential client (the facade's) and its built-in
// sign-in and consent pages. Any login name signs in; the account's email
// is NAME@example.com (verified), and "root" is in the group memory-admins.
//
// Usage: node upstream.mjs PORT CLIENT_ID CLIENT_SECRET REDIRECT_URI
import Provider from 'oidc-provider';

const [port, clientId, clientSecret, redirectUri] = process.argv.slice(2);
const issuer = `http://127.0.0.1:${port}`;
const provider = new Provider(issuer, {
  clients: [{
    client_id: clientId,
    client_secret: clientSecret,
    redirect_uris: [redirectUri],
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  }],
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name', 'groups'],
  },
  scopes: ['openid', 'email', 'profile'],
  features: { devInteractions: { enabled: true } },
  pkce: { required: () => true },
  cookies: { keys: ['oauth-test-cookie-key-not-a-secret'] },
  async findAccount(_ctx, id) {
    return {
      accountId: id,
      async claims() {
        return {
          sub: id,
          name: id,
          email: `${id}@example.com`,
          email_verified: true,
          groups: id === 'root' ? ['memory-admins'] : [],
        };
      },
    };
  },
});
provider.listen(Number(port), '127.0.0.1', () => {
  console.log(`oidc-provider ready at ${issuer}`);
});
