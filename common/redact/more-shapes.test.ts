import { describe, expect, it } from 'vitest';
import { createStreamRedactor, redact, REDACTED } from './index';
import { everyChar, streamed } from './testing';

/** A password-like value no other rule would take for a token by its shape. */
const PW = 'Jmbk7CMfHj7YehwQ';

/** Each text, whole and fed one character at a time: the secret is gone and the rest is kept. */
function masks(text: string, secret = PW) {
  for (const out of [redact(text), streamed(text, {}, everyChar(text))]) {
    expect(out, text).not.toContain(secret.slice(2, 12));
    expect(out, text).toContain(REDACTED);
  }
}

describe("secrets given as a tool's own flag", () => {
  it('masks the value where the tool named on the line reads it as a secret', () => {
    for (const text of [
      `redis-cli -h cache -a ${PW} ping`,
      `mongosh -u admin -p ${PW}`,
      `sqlcmd -S db -U sa -P ${PW}`,
      `openssl pkcs12 -in a.p12 -passin pass:${PW}`,
      `openssl enc -aes-256-cbc -k ${PW} -in f`,
      `zip -P ${PW} a.zip f`,
      `7z a -p${PW} a.7z f`,
      `smbclient //h/s -U user%${PW}`,
      `lftp -u user,${PW} ftp://h`,
      `ldapwhoami -x -w ${PW}`,
      `docker login -u me -p ${PW} registry.example.com`,
      `podman login -p "${PW}" quay.io`,
      `helm registry login r -u me -p ${PW}`,
      `az login --service-principal -u id -p ${PW} --tenant t`,
      `vault login ${PW}`,
      `curl --oauth2-bearer ${PW} https://x`,
      `curl -u :${PW} https://x`,
      `keytool -list -keystore k.jks -storepass ${PW}`,
      `jarsigner -keypass '${PW}' a.jar alias`,
      `gh secret set DEPLOY_KEY --body "${PW}"`,
      `kubectl create secret generic db --from-literal=anything=${PW}`,
      `aws configure set aws_secret_access_key ${PW}`,
      `ssh-keygen -t ed25519 -N ${PW} -f key`,
      `htpasswd -bc /etc/nginx/.htpasswd admin ${PW}`,
      `htpasswd -b .htpasswd "web user" '${PW}'`,
      `htpasswd -nbB admin ${PW}`,
      `net use Z: \\\\files\\share /user:CORP\\bob ${PW} /persistent:no`,
    ]) masks(`$ ${text}\n`);
  });

  it('leaves the same flags alone for tools where they mean something else', () => {
    for (const text of [
      'docker run -p 8080:80 nginx',
      'ssh -p 2222 deploy@host',
      'ls -a /tmp',
      'grep -w word file.txt',
      'git log -p HEAD~3',
      'docker login registry.io',
      'smbclient -L host -U guest',
      'curl -u admin https://x',
      'kubectl create configmap x --from-literal=a=b',
      'vault login -method=userpass username=me',
      'ssh-keygen -t ed25519 -N "" -f key',
      'pytest -k test_login -p no:cacheprovider',
      'aws configure set region us-east-1',
      'htpasswd -c .htpasswd admin',
      'htpasswd -b .htpasswd admin',
      'htpasswd -D .htpasswd admin',
      'net use Z: \\\\files\\share /user:bob',
      'ls -b one two three',
    ]) expect(redact(`$ ${text}\n`)).toBe(`$ ${text}\n`);
  });
});

describe('password hashes and PuTTY keys', () => {
  const bcrypt = 'X4lTJQ9hXBC5VKj30x4riqJfQz3N9bGV5ClaJDFk5p288.ad0i6Wr';
  it('masks the hash after its scheme and parameters, which stay readable', () => {
    expect(redact(`admin:$2y$12$${bcrypt}\n`)).toBe(`admin:$2y$12$${REDACTED}\n`);
    expect(redact('root:$6$rounds=5000$Qx1Zr8pLk2$' + 'a'.repeat(30) + 'B'.repeat(56) + ':19700:0:99999:7:::\n')).toBe(`root:$6$rounds=5000$Qx1Zr8pLk2$${REDACTED}:19700:0:99999:7:::\n`);
    masks(`web:$apr1$hUjPjhCW$WxAb8WblDinOPL34xBkMp9\n`, 'WxAb8WblDinOPL34xBkMp9');
    masks(`pbkdf2_sha256$600000$Jd1Kp0aQ$${PW}${PW}Zq0=\n`);
    masks(`$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$${PW}${PW}abc\n`);
  });
  it('does not take prices, shell variables or short runs for hashes', () => {
    for (const text of ['cost: $1$ per run', 'echo $5$HOME', 'total $6$abc$def']) expect(redact(text)).toBe(text);
  });
  it("masks a PuTTY key's private lines and keeps its public ones", () => {
    const pub = 'AAAAC3NzaC1lZDI1NTE5AAAAIGcH4yCk0W2r0kQ5mG9aN3sXw1F7pVbTn8ZqR2dLe6uY';
    const priv = ['AAAAIBxN4TqWc3mZ7kP0aLr9sVf2Yh6Ju8Ei1Go5Dn3Kx7Qb', 'AAAAICq9Wm2Zx5Nn7Lk3Pj8Hg1Ff4Dd6Ss0Aa2Qq9Ww5Ee7Rr'];
    const file = `PuTTY-User-Key-File-3: ssh-ed25519\r\nEncryption: none\r\nComment: me\r\nPublic-Lines: 2\r\n${pub}\r\nAAAA\r\nPrivate-Lines: 2\r\n${priv[0]}\r\n${priv[1]}\r\nPrivate-MAC: ${'ab12'.repeat(16)}\r\n`;
    for (const out of [redact(file), streamed(file, {}, everyChar(file))]) {
      for (const p of priv) expect(out).not.toContain(p.slice(4, 20));
      expect(out).toContain(pub);
      expect(out).toContain(`Private-Lines: 2\r\n${REDACTED}\r\nPrivate-MAC:`);
    }
  });
});

describe('XML configuration and short key names', () => {
  it("masks Maven's <password> and .NET's <add key=…Password value=…>, keeping names and references", () => {
    masks(`<servers>\n  <server>\n    <id>nexus</id>\n    <password>${PW}</password>\n  </server>\n</servers>\n`);
    masks(`<packageSourceCredentials><feed><add key="Username" value="me" /><add key="ClearTextPassword" value="${PW}" /></feed></packageSourceCredentials>\n`);
    masks(`<appSettings><add key="Stripe.ApiKey" value="${PW}"/></appSettings>\n`);
    for (const text of ['<password>${env.NEXUS_PW}</password>\n', '<add key="Timeout" value="30" />\n', '<token></token>\n']) expect(redact(text)).toBe(text);
  });
  it('masks ROOT_PW=, STRIPE_SK= and VAULT_SECRET_ID= like the other secret keys', () => {
    for (const k of ['ROOT_PW', 'STRIPE_SK', 'VAULT_SECRET_ID']) {
      masks(`${k}=${PW}\n`);
      masks(`  ${k.toLowerCase()}: "${PW}"\n`);
    }
    for (const text of ['DISK=/dev/sda1\n', 'TASK=build\n']) expect(redact(text)).toBe(text);
  });
});

describe('key material and tables', () => {
  it("masks a JWK's private member and keeps its public ones", () => {
    const x = 'jSUEwhNr5SRiDm-EBj1SGBekXtBaIr2vC9Hvit5VU78';
    const d = 'iFybCfOVgZfmJOyZL0GtIt_bPu-2znmRVC7XpVFbmwQ';
    const text = `{"kty":"EC","crv":"P-256","x":"${x}","d": "${d}"}\n`;
    for (const out of [redact(text), streamed(text, {}, everyChar(text))]) expect(out).toBe(`{"kty":"EC","crv":"P-256","x":"${x}","d": "${REDACTED}"}\n`);
    for (const plain of ['{"d": "2026-01-01", "p": "short"}\n', `{"p": "${d}-and more words"}\n`]) expect(redact(plain)).toBe(plain);
  });
  it('masks an OpenVPN static key between its BEGIN and END lines', () => {
    const body = '633241a68d68b86724ba2ef304928605\ne627591be04b87b3781d66c7076b97ce';
    masks(`-----BEGIN OpenVPN Static key V1-----\n${body}\n-----END OpenVPN Static key V1-----\n`, body);
    expect(redact(`-----BEGIN OpenVPN Static key V1-----\n${body}\n-----END OpenVPN Static key V1-----\nnext\n`)).toContain('-----END OpenVPN Static key V1-----\nnext');
  });
  it("masks `aws ecr get-login-password`'s output, which has no label", () => {
    const token = Buffer.from(JSON.stringify({ payload: 'Q'.repeat(40) + PW.repeat(20), datakey: PW.repeat(8), version: '2' })).toString('base64');
    masks(`${token}\n`, token.slice(200));
  });
  it("masks a secret's row in `vault kv get`'s table, not other rows or tables with more columns", () => {
    const table = `====== Data ======\nKey          Value\n---          -----\nusername     deploy\npassword     ${PW}\napi_token    ${PW}x\n`;
    for (const out of [redact(table), streamed(table, {}, everyChar(table))]) {
      expect(out).toBe(`====== Data ======\nKey          Value\n---          -----\nusername     deploy\npassword     ${REDACTED}\napi_token    ${REDACTED}\n`);
    }
    const other = 'NAME             TYPE     DATA   AGE\ndb-password      Opaque   1      5d\nthe password is  shown\n';
    expect(redact(other)).toBe(other);
  });
  it('masks an Azure API Management subscription key header', () => masks(`Ocp-Apim-Subscription-Key: ${PW}\n`));
});

describe('what is typed echoes at once', () => {
  it('a key, a word or a hex run pushed alone comes straight back (no rule holds text before its label)', () => {
    for (const typed of ['a', 'f', '7', 'deadbeef', 'cafe0123', 'ab12cd34ef56ab12cd34ef56ab12cd34', '-p', 'login', '$2', '<pass', 'AAAA', '\npassword']) {
      const r = createStreamRedactor();
      let out = '';
      for (const c of typed) out += r.push(c);
      expect(out, JSON.stringify(typed)).toBe(typed);
    }
  });
});
