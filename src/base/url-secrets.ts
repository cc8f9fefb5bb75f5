/**
 * Secrets a storage URL carries for BR, hidden wherever the URL is shown: an Azure SAS token
 * (`sas-token=` in BR's URL, br/pkg/storage/parse.go; `sig=` in the token itself). The run scripts
 * hide them before they write the termination message (src/render/scripts/br.ts); this hides them
 * again in what the controller reads back, for output the script did not write (a log tail the kubelet
 * kept when BR died first).
 */

/** The text with each SAS token's value replaced by `REDACTED`. */
export function hideUrlSecrets(text: string): string {
  return text.replace(/(sas-token=)[^&":\s]*/gi, '$1REDACTED').replace(/([?&]sig=)[^&"\s]*/gi, '$1REDACTED');
}
