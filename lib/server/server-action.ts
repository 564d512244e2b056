/**
 * How Next tells a request that may run a server action: an action id header, or a multipart
 * form body (a form posted without JavaScript). Imports nothing, so both the edge checks and the
 * listener's route table can use it.
 */

/** Whether a body is a multipart form, as Next judges one a no-JavaScript server action (a prefix of the content type). */
export function isMultipart(contentType: string | null | undefined): boolean {
  return contentType?.startsWith("multipart/form-data") ?? false;
}
