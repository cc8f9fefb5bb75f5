/**
 * The storage a schedule's retention removes expired runs from, opened with the credentials its
 * Secret holds, read as tidb-operator's backup jobs read them (pkg/backup/util/util.go,
 * `GenerateStorageCertEnv`; pkg/backup/util/remote.go for the order Azure's are tried in):
 *
 * - S3: `access_key` and `secret_key`.
 * - GCS: `credentials`, a service account key.
 * - Azure: the SAS token of the storage spec when it has one; else the Secret's `AZURE_STORAGE_KEY`.
 *   The account is the spec's `storageAccount`, else the Secret's `AZURE_STORAGE_ACCOUNT`. Azure AD
 *   client credentials (`AZURE_CLIENT_ID`, `AZURE_CLIENT_SECRET`, `AZURE_TENANT_ID`) are not used yet:
 *   a Secret with only those is an error that says so.
 */
import type { BackupRetentionInfo } from '../../tidbcluster/contract';
import { AzureBlobClient, type AzureCredential } from './azure-blob';
import type { BackupAccess } from './backups';
import { GcsClient } from './gcs';
import { GoogleTokenSource, parseServiceAccountKey } from './gcs-auth';
import type { ObjectStore } from './object-store';
import { S3Client } from './s3';

/** The Secret keys of Azure AD client credentials, which retention does not use yet. */
const AZURE_AD_KEYS = ['AZURE_CLIENT_ID', 'AZURE_CLIENT_SECRET', 'AZURE_TENANT_ID'] as const;

/**
 * Token sources by service account key, kept across passes so that a token is fetched once an hour,
 * not once a removal. A key that changes in its Secret starts a new source; a few old ones are kept.
 */
const tokenSources = new Map<string, GoogleTokenSource>();
const TOKEN_SOURCES_KEPT = 16;

/** The storage a policy that removes data names (its settings always name a bucket then: tidbcluster/contract/cluster-info.ts). */
export async function openBackupStorage(
  policy: BackupRetentionInfo,
  access: Pick<BackupAccess, 'bucketKeys' | 'secretData'>,
): Promise<ObjectStore> {
  const { bucket } = policy;
  if (bucket === undefined || policy.prefix === undefined) throw new Error('the retention settings name no bucket to remove backups from');
  switch (policy.storageKind ?? 's3') {
    case 's3':
      return new S3Client({ ...policy, bucket }, await access.bucketKeys(secretOf(policy)));
    case 'gcs': {
      const secret = secretOf(policy);
      const text = (await secretData(access, secret)).credentials?.toString('utf8');
      if (!text) throw new Error(`the Secret ${secret} has no credentials`);
      return new GcsClient(
        { bucket, ...(policy.endpoint && { endpoint: policy.endpoint }) },
        tokenSource(text, `the credentials in the Secret ${secret}`),
      );
    }
    case 'azblob': {
      const { account, credential } = await azureAccess(policy, access);
      return new AzureBlobClient({ account, container: bucket, ...(policy.endpoint && { endpoint: policy.endpoint }) }, credential);
    }
  }
}

/** The account and how to authorize on it: the SAS token first, as the operator tries it, then the shared key. */
async function azureAccess(
  policy: BackupRetentionInfo,
  access: Pick<BackupAccess, 'secretData'>,
): Promise<{ account: string; credential: AzureCredential }> {
  const data = policy.secretName !== undefined ? await secretData(access, policy.secretName) : {};
  const value = (k: string) => data[k]?.toString('utf8').trim() || undefined;
  const account = policy.account || value('AZURE_STORAGE_ACCOUNT');
  if (!account) {
    throw new Error(
      policy.secretName
        ? `the Secret ${policy.secretName} has no AZURE_STORAGE_ACCOUNT, and the storage names no storageAccount`
        : 'the storage names no storageAccount and no Secret',
    );
  }
  if (policy.sasToken) return { account, credential: { sasToken: policy.sasToken } };
  if (policy.secretName === undefined) throw new Error('the storage names neither a sasToken nor a Secret with AZURE_STORAGE_KEY');
  const key = value('AZURE_STORAGE_KEY');
  if (key) return { account, credential: { sharedKey: key } };
  if (AZURE_AD_KEYS.every((k) => value(k))) {
    throw new Error(
      `the Secret ${policy.secretName} holds Azure AD client credentials (${AZURE_AD_KEYS.join(', ')}), which retention does not use yet: add the account's AZURE_STORAGE_KEY to it, or give the storage a sasToken`,
    );
  }
  throw new Error(`the Secret ${policy.secretName} has no AZURE_STORAGE_KEY`);
}

function secretOf(policy: BackupRetentionInfo): string {
  if (policy.secretName === undefined) throw new Error('the retention settings name no Secret with the storage credentials');
  return policy.secretName;
}

async function secretData(access: Pick<BackupAccess, 'secretData'>, name: string): Promise<Record<string, Buffer>> {
  const data = await access.secretData(name);
  if (data === undefined) throw new Error(`the Secret ${name} does not exist`);
  return data;
}

function tokenSource(credentials: string, where: string): GoogleTokenSource {
  let source = tokenSources.get(credentials);
  if (!source) {
    source = new GoogleTokenSource(parseServiceAccountKey(credentials, where));
    if (tokenSources.size >= TOKEN_SOURCES_KEPT) tokenSources.delete(tokenSources.keys().next().value!);
    tokenSources.set(credentials, source);
  }
  return source;
}
