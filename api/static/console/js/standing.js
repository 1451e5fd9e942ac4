// How the signed-in person stands towards one user: the one place that decides which of
// the user page's actions the console offers. Suspending or reactivating, resetting MFA,
// sending a recovery e-mail (and changing the e-mail or phone, should the console offer
// it) are for admins over the user only: org admins; admins of the user's home project (not over org admins); group
// admins over the members of their groups who are no admins. Rights to update users
// (at org, project or group level) are not enough.
//
// Decided from the server's answers, never guessed: the interface gives a user's
// `is_active` (and password flags) to admins over that user alone (the "Admin only"
// fields), so its presence is the server's own word on the standing; the caller's own
// access (they hold some admin access) and the target's `is_org_admin` must agree with it.
// The server still decides every call.

/** What `me` may do to `user` (a user as `GET /v2/users/{id}` answered it). */
export function towardsUser(me, user) {
  const self = user.id === me.id;
  const holdsAdmin = me.isOrgAdmin || me.isProjectAdmin || me.isGroupAdmin;
  const outranked = Boolean(user.is_org_admin) && !me.isOrgAdmin;
  const admin = !self && holdsAdmin && !outranked && "is_active" in user;
  return Object.freeze({ self, admin, suspend: admin, resetMfa: admin, recover: admin });
}
