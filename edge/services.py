"""The services an HTTP handler may call, built once by `edge/app.py`."""

from __future__ import annotations

from dataclasses import dataclass

from edge.access.engine import Caller, Permissions
from edge.access.kinds import GroupAccessKind, ProjectAccessKind, RoleAccessKind
from edge.access.objects import AccessObjects
from edge.accounts import user_kind
from edge.accounts.device_certificates import DeviceCertificates
from edge.accounts.devices import Devices
from edge.accounts.pictures import Pictures
from edge.accounts.users import Users
from edge.auth.keys import KeyRing
from edge.auth.mfa import Mfa
from edge.auth.passwords import Passwords
from edge.auth.signin import SignIn
from edge.auth.sms_mfa import SmsMfa
from edge.auth.tokens import Tokens
from edge.billing.ledger import Billing
from edge.billing.meter import Meter
from edge.certificates.ca import SiteCa
from edge.commands.service import CommandLimits, Commands
from edge.data.eraser import DataEraser
from edge.data.service import Data
from edge.data.signing import DataSigner
from edge.delivery.alerts import OperatorAlerts
from edge.delivery.messages import Messages
from edge.delivery.outbox_worker import OutboxWorker
from edge.devices.certificate_logins import CertificateLogins
from edge.devices.credentials import Endpoints
from edge.devices.directory import DeviceDirectory
from edge.devices.keys import DeviceKeys
from edge.devices.last_seen import LastSeen
from edge.devices.mqtt_clients import ClientDirectory
from edge.devices.presence import Presence
from edge.devices.write_rate import WriteRate
from edge.files.entries import Files
from edge.files.quotas import Quotas
from edge.files.rights import FileRights
from edge.files.signing import UrlSigner, load_key
from edge.files.sweeps import Sweeps
from edge.files.uploads import Limits, Uploads
from edge.jobs.artifacts import Artifacts
from edge.jobs.executions import DeviceJobs
from edge.jobs.notices import Notices as JobNotices
from edge.jobs.retention import Retention as JobRetention
from edge.jobs.scheduler import Scheduler
from edge.jobs.service import JobLimits, Jobs
from edge.jobs.shares import Shares as JobShares
from edge.kernel import clock, storage_errors
from edge.kernel.audit import Audit
from edge.kernel.config import Config
from edge.kernel.events import Hook
from edge.kernel.listing import CursorCodec
from edge.kernel.principal import Principal
from edge.live import sources
from edge.live.feed import Feed
from edge.live.readable import Readable
from edge.live.service import Live
from edge.live.streams import Streams
from edge.provisioning.claims import Claims
from edge.provisioning.enrollment import ENROLL_PATH, Enrollment
from edge.pulse.counters import Counters
from edge.pulse.sampler import Sampler
from edge.pulse.service import Pulse
from edge.summary.service import Lists, Summary
from edge.tenancy import settings
from edge.tenancy.account import Account
from edge.tenancy.email_templates import EmailTemplates
from edge.tenancy.groups import Groups
from edge.tenancy.my_org import MyOrg
from edge.tenancy.orgs import Orgs
from edge.tenancy.projects import Projects
from edge.tenancy.roles import Roles
from edge.tenancy.trash import Trash
from edge.tunnels import views as tunnel_views
from edge.tunnels.limits import Limits as TunnelLimits
from edge.tunnels.relay import Hub
from edge.tunnels.tunnels import Tunnels
from edge.twins.document import Limits as TwinLimits
from edge.twins.twins import Twins
from storage import space
from storage import tunnels as tunnel_store
from storage.blobs import BlobStore
from storage.database import Database


@dataclass
class Services:
    config: Config
    db: Database
    keys: KeyRing
    cursors: CursorCodec
    tokens: Tokens
    orgs: Orgs
    signin: SignIn
    alerts: OperatorAlerts
    projects: Projects
    permissions: Permissions
    access: AccessObjects
    trash: Trash
    groups: Groups
    roles: Roles
    users: Users
    pictures: Pictures
    account: Account
    my_org: MyOrg
    messages: Messages
    email_templates: EmailTemplates
    claims: Claims
    enrollment: Enrollment
    outbox_worker: OutboxWorker
    mfa: Mfa
    sms_mfa: SmsMfa
    passwords: Passwords
    site_ca: SiteCa
    last_seen: LastSeen
    device_keys: DeviceKeys
    device_writes: WriteRate
    devices: Devices
    certificate_logins: CertificateLogins
    device_certificates: DeviceCertificates
    device_directory: DeviceDirectory
    data: Data
    data_eraser: DataEraser
    files: Files
    uploads: Uploads
    file_sweeps: Sweeps
    blobs: BlobStore
    tunnels: Tunnels
    commands: Commands
    twins: Twins
    jobs: Jobs
    device_jobs: DeviceJobs
    job_scheduler: Scheduler
    job_retention: JobRetention
    live: Live
    billing: Billing
    meter: Meter
    audit: Audit
    summary: Summary
    pulse: Pulse
    pulse_sampler: Sampler
    # Who may use the MQTT broker; set by edge/app.py (the broker is not an edge service).
    mqtt_directory: ClientDirectory | None = None

    @classmethod
    def build(cls, config: Config, db: Database, keys: KeyRing) -> Services:
        cursors = CursorCodec(keys.hmac_secret)
        tokens = Tokens(db, keys)
        permissions = Permissions(db)
        trash = Trash(db, permissions, tokens, config.trash_retention_days)
        orgs = Orgs(db, cursors, user_kind.first_admin)
        outbox_worker = OutboxWorker(db, config)
        alerts = OperatorAlerts(
            db, config.admin_email, config.base_url, outbox_worker.mailer, config.mail_from
        )
        projects = Projects(db, cursors, orgs, permissions, trash)
        signin = SignIn(db, tokens, orgs, projects)

        def setting(org_id: str, project_id: str | None, name: str) -> object:
            return settings.effective(db, org_id, project_id, name)

        role_kind = RoleAccessKind(db, permissions, tokens, settings.role_limit)
        groups = Groups(db, cursors, permissions, trash)
        roles = Roles(db, cursors, permissions, tokens, role_kind, trash)
        messages = Messages(db, config.base_url)
        users = Users(db, cursors, orgs, tokens, permissions, trash, messages)
        software_mfa = Mfa(db, keys.mfa_secret, orgs, tokens)
        sms_mfa = SmsMfa(db, orgs, messages)
        signin.attach(software_mfa, sms_mfa)
        site_ca = SiteCa.open(
            config.data_dir, config.device_certificate_days
        )  # made at first start
        last_seen = LastSeen(db)
        device_keys = DeviceKeys(db, last_seen)
        certificate_logins = CertificateLogins(db, site_ca, last_seen)
        endpoints = Endpoints.of(config.base_url, config.broker_host)
        presence = Presence(db)
        most_tunnels = config.tunnel_max_open_per_device
        devices = Devices(
            db,
            cursors,
            orgs,
            permissions,
            trash,
            site_ca,
            endpoints,
            device_keys,
            presence,
            lambda device_ids: tunnel_views.open_for(db, device_ids, most_tunnels),
        )

        def reads(caller: Caller, kind: str, grantee_id: str) -> bool:
            """Access goes only to accounts and roles the caller can read (the reach rule,
            edge/accounts/service.py)."""
            if kind == "role":
                return role_kind.sees(caller, grantee_id)
            return (users if kind == "user" else devices).readable(caller, grantee_id)

        access = AccessObjects(
            db,
            permissions,
            {
                "group": GroupAccessKind(db, permissions, setting),
                "project": ProjectAccessKind(db, permissions, tokens),
                "role": role_kind,
            },
            reads,
        )

        def data_settings(
            org_id: str, project_id: str | None, names: tuple[str, ...]
        ) -> dict[str, object]:
            return settings.effective_many(db, org_id, project_id, names)

        data = Data(
            db,
            permissions,
            data_settings,
            cursors,
            DataSigner.load_or_create(config.data_dir),
            max_value_bytes=config.data_max_value_bytes,
            max_bulk_paths=config.data_max_bulk_paths,
        )
        blobs = BlobStore(config.data_dir, storage_errors.translated)
        file_rights = FileRights(db, permissions)
        signer, file_sweeps = UrlSigner(load_key(config.data_dir)), Sweeps(db, blobs)
        trash.after_erase(file_sweeps.collect)
        tunnels = Tunnels(db, devices, messages, _tunnel_hub(config, db), config.base_url)
        files = Files(db, file_rights, blobs, signer, file_sweeps, Hook("files"))
        twins = Twins(db, devices, TwinLimits(config.twin_max_bytes))
        artifacts = Artifacts(db, file_rights, blobs, signer, config.base_url)
        job_notices = JobNotices(db, artifacts.url)
        job_limits = _job_limits(config)
        jobs = Jobs(db, permissions, devices, artifacts, job_notices, job_limits)
        scheduler = Scheduler(db, job_notices, config.jobs_tick_seconds)
        jobs.wake = scheduler.wake
        live = _live(config, db, data, files, file_rights, devices, twins, jobs)
        limits = CommandLimits(
            config.command_rate_limit,
            config.command_retention_hours,
            config.mqtt_max_message_bytes,
            config.command_device_bytes,
            config.command_caller_rate_limit,
        )
        return cls(
            config=config,
            db=db,
            keys=keys,
            cursors=cursors,
            tokens=tokens,
            permissions=permissions,
            access=access,
            trash=trash,
            orgs=orgs,
            signin=signin,
            alerts=alerts,
            projects=projects,
            groups=groups,
            roles=roles,
            users=users,
            pictures=Pictures(db, users),
            account=Account(db, permissions),
            my_org=MyOrg(db, orgs, permissions),
            messages=messages,
            email_templates=EmailTemplates(db, cursors, permissions),
            claims=Claims(db, cursors, permissions, config.base_url.rstrip("/") + ENROLL_PATH),
            enrollment=Enrollment(db, signin.throttle, permissions, site_ca, endpoints),
            outbox_worker=outbox_worker,
            mfa=software_mfa,
            sms_mfa=sms_mfa,
            passwords=Passwords(db, tokens, projects, messages),
            site_ca=site_ca,
            last_seen=last_seen,
            device_keys=device_keys,
            device_writes=WriteRate(config.device_write_rate, config.device_write_burst),
            devices=devices,
            certificate_logins=certificate_logins,
            device_certificates=DeviceCertificates(db, devices, site_ca, config),
            device_directory=DeviceDirectory(
                db, device_keys, certificate_logins, tokens, permissions, last_seen
            ),
            data=data,
            data_eraser=DataEraser(db),
            files=files,
            uploads=Uploads(
                db,
                file_rights,
                blobs,
                signer,
                file_sweeps,
                Quotas(config.files_group_quota_bytes, config.files_quota_bytes),
                Limits(
                    config.files_max_upload_bytes,
                    config.files_min_part_bytes,
                    config.files_max_parts,
                ),
                files.changes,
            ),
            file_sweeps=file_sweeps,
            blobs=blobs,
            tunnels=tunnels,
            commands=Commands(db, devices, limits),
            twins=twins,
            jobs=jobs,
            device_jobs=DeviceJobs(db, devices, job_notices),
            job_scheduler=scheduler,
            job_retention=JobRetention(db, config.jobs_retention_days),
            live=live,
            billing=Billing(db, cursors, orgs),
            meter=Meter(db),
            audit=Audit(
                db,
                lambda who: permissions.caller(who).is_org_admin,
                config.audit_retention_days,
            ),
            summary=Summary(db, permissions, Lists(orgs, projects, users, groups, roles, devices)),
            pulse=Pulse(db, permissions, config.pulse_retention_hours),
            pulse_sampler=_pulse_sampler(config, db, presence, signin),
        )


def _live(
    config: Config,
    db: Database,
    data: Data,
    files: Files,
    file_rights: FileRights,
    devices: Devices,
    twins: Twins,
    jobs: Jobs,
) -> Live:
    """The change feed, fed by the change hooks, and who may read what it tells."""
    feed = Feed(config.events_window_seconds, config.events_window_count)
    sources.connect(
        feed,
        data.changes,
        files.changes,
        devices.presence.events,
        twins.changes,
        jobs.notices.progress,
    )
    streams = Streams(feed, config.events_max_streams, config.events_stream_buffer)

    def device_readable(principal: Principal, device_id: str) -> bool:
        return devices.readable(devices.grants(principal), device_id)

    readable = Readable(
        data.may_read,
        file_rights.may_read,
        device_readable,
        data.reader,
        file_rights.reader,
        jobs.may_read,
    )
    return Live(db, feed, streams, readable, file_rights.open)


def _pulse_sampler(config: Config, db: Database, presence: Presence, signin: SignIn) -> Sampler:
    """The pulse's counters, told of presence's transitions and the throttle's sign-in
    failures as they happen (requests and MQTT messages are wired by edge/app.py)."""
    counters = Counters()
    presence.events.listen(counters.presence)
    signin.throttle.failures.listen(counters.sign_in_failed)
    return Sampler(
        db, counters, lambda: space.free_bytes(config.data_dir), config.pulse_retention_hours
    )


def _job_limits(config: Config) -> JobLimits:
    shares = JobShares(
        config.jobs_max_running,
        config.jobs_max_running_per_user,
        config.jobs_max_running_per_project,
        config.jobs_admin_reserve,
    )
    return JobLimits(config.jobs_max_targets, shares, config.jobs_create_per_hour)


def _tunnel_hub(config: Config, db: Database) -> Hub:
    limits = TunnelLimits(
        bytes_per_second=config.tunnel_max_bytes_per_second,
        max_streams=config.tunnel_max_streams,
        max_open=config.tunnel_max_open_per_device,
        idle_seconds=config.tunnel_idle_timeout,
        connect_seconds=config.tunnel_connect_timeout,
    )

    def still_open(tunnel_ids: list[str]) -> set[str]:
        now = clock.now_iso()
        return db.read(lambda c: tunnel_store.still_open(c, tunnel_ids, now))

    return Hub(limits, still_open)
