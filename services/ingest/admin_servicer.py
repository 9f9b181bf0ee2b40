"""gRPC edge of the Admin service: protobuf in, protobuf out (the caller and errors are handled by
`EdgeInterceptor` in engram/rpc/server.py)."""

from __future__ import annotations

import json
from typing import Any

import grpc

from engram.domain.admin import DEFAULT_KIND_IMPORTANCE
from engram.domain.models import ApiKeyInfo, TenantConfig, Tunnel
from engram.rpc.context import caller
from engram.rpc.convert import timestamp
from engram.v1 import admin_pb2, admin_pb2_grpc
from services.ingest.admin import AdminService, ConfigChanges

KIND_FLAGS = ("singleton", "requires_review", "stays_in_recall_when_disputed", "default_importance", "enabled")
JSON_SETTINGS = ("ttl_days", "promotion", "recall", "placement_rules")


class AdminServicer(admin_pb2_grpc.AdminServicer):
    def __init__(self, service: AdminService) -> None:
        self._service = service

    async def CreateTenant(
        self, request: admin_pb2.CreateTenantRequest, context: grpc.aio.ServicerContext
    ) -> admin_pb2.CreatedResponse:
        return admin_pb2.CreatedResponse(id=await self._service.create_tenant(caller(), request.name))

    async def CreateWorkspace(
        self, request: admin_pb2.CreateWorkspaceRequest, context: grpc.aio.ServicerContext
    ) -> admin_pb2.CreatedResponse:
        workspace_id = await self._service.create_workspace(caller(), request.tenant_id, request.name)
        return admin_pb2.CreatedResponse(id=workspace_id)

    async def AddMember(
        self, request: admin_pb2.AddMemberRequest, context: grpc.aio.ServicerContext
    ) -> admin_pb2.AddMemberResponse:
        await self._service.add_member(
            caller(), request.tenant_id, request.workspace_id, request.principal_id, request.role
        )
        return admin_pb2.AddMemberResponse(
            workspace_id=request.workspace_id, principal_id=request.principal_id, role=request.role
        )

    async def CreatePrincipal(
        self, request: admin_pb2.CreatePrincipalRequest, context: grpc.aio.ServicerContext
    ) -> admin_pb2.CreatedResponse:
        principal_id = await self._service.create_principal(
            caller(), request.tenant_id, request.name, request.type, request.trusted
        )
        return admin_pb2.CreatedResponse(id=principal_id)

    async def CreateApiKey(
        self, request: admin_pb2.CreateApiKeyRequest, context: grpc.aio.ServicerContext
    ) -> admin_pb2.CreateApiKeyResponse:
        issued = await self._service.create_api_key(
            caller(), request.tenant_id, request.principal_id, list(request.scopes), request.label
        )
        return admin_pb2.CreateApiKeyResponse(
            id=issued.key_id,
            key=issued.key,
            tenant_id=issued.tenant_id,
            principal_id=issued.principal_id,
            scopes=issued.scopes,
            label=issued.label,
        )

    async def ListApiKeys(
        self, request: admin_pb2.ListApiKeysRequest, context: grpc.aio.ServicerContext
    ) -> admin_pb2.ListApiKeysResponse:
        keys = await self._service.list_api_keys(caller(), request.tenant_id)
        return admin_pb2.ListApiKeysResponse(items=[_key(k) for k in keys])

    async def RevokeApiKey(
        self, request: admin_pb2.RevokeApiKeyRequest, context: grpc.aio.ServicerContext
    ) -> admin_pb2.RevokeApiKeyResponse:
        await self._service.revoke_api_key(caller(), request.tenant_id, request.id)
        return admin_pb2.RevokeApiKeyResponse(id=request.id)

    async def GetTenantConfig(
        self, request: admin_pb2.GetTenantConfigRequest, context: grpc.aio.ServicerContext
    ) -> admin_pb2.TenantConfigResponse:
        return _config(await self._service.config(caller(), request.tenant_id))

    async def PatchTenantConfig(
        self, request: admin_pb2.PatchTenantConfigRequest, context: grpc.aio.ServicerContext
    ) -> admin_pb2.TenantConfigResponse:
        given: dict[str, Any] = {
            name: getattr(request, f"{name}_json") for name in JSON_SETTINGS if request.HasField(f"{name}_json")
        }
        for name in ("public_enabled", "feedback_daily_limit", "secret_policy", "trash_retention_days"):
            if request.HasField(name):
                given[name] = getattr(request, name)
        if request.HasField("rate_limits"):
            given["rate_limits"] = dict(request.rate_limits.per_minute)
        return _config(await self._service.patch_config(caller(), request.tenant_id, ConfigChanges(**given)))

    async def RateLimits(
        self, request: admin_pb2.RateLimitsRequest, context: grpc.aio.ServicerContext
    ) -> admin_pb2.RateLimitsResponse:
        limits = await self._service.rate_limits(caller())
        return admin_pb2.RateLimitsResponse(limits=admin_pb2.RouteLimits(per_minute=limits))

    async def ListKinds(
        self, request: admin_pb2.ListKindsRequest, context: grpc.aio.ServicerContext
    ) -> admin_pb2.ListKindsResponse:
        return admin_pb2.ListKindsResponse(
            items=[_kind(k) for k in await self._service.kinds(caller(), request.tenant_id)]
        )

    async def CreateKind(
        self, request: admin_pb2.CreateKindRequest, context: grpc.aio.ServicerContext
    ) -> admin_pb2.Kind:
        flags = {
            "singleton": request.singleton,
            "requires_review": request.requires_review,
            "stays_in_recall_when_disputed": request.stays_in_recall_when_disputed,
            "default_importance": request.default_importance
            if request.HasField("default_importance")
            else DEFAULT_KIND_IMPORTANCE,
        }
        return _kind(await self._service.create_kind(caller(), request.tenant_id, request.name, flags))

    async def PatchKind(self, request: admin_pb2.PatchKindRequest, context: grpc.aio.ServicerContext) -> admin_pb2.Kind:
        changes = {name: getattr(request, name) for name in KIND_FLAGS if request.HasField(name)}
        return _kind(await self._service.patch_kind(caller(), request.tenant_id, request.name, changes))

    async def Promote(
        self, request: admin_pb2.PromoteRequest, context: grpc.aio.ServicerContext
    ) -> admin_pb2.PromoteResponse:
        tenant, counts = await self._service.promote(
            caller(), request.tenant_id, dry_run=request.dry_run, limit=request.limit
        )
        return admin_pb2.PromoteResponse(
            tenant_id=tenant, dry_run=request.dry_run, decided=sum(counts.values()), counts=dict(counts)
        )

    async def AddTunnel(
        self, request: admin_pb2.AddTunnelRequest, context: grpc.aio.ServicerContext
    ) -> admin_pb2.AddTunnelResponse:
        tunnel, created = await self._service.add_tunnel(
            caller(), request.tenant_id, request.from_wing, request.from_room, request.to_wing, request.to_room
        )
        return admin_pb2.AddTunnelResponse(tunnel=_tunnel(tunnel), created=created)

    async def ListTunnels(
        self, request: admin_pb2.ListTunnelsRequest, context: grpc.aio.ServicerContext
    ) -> admin_pb2.ListTunnelsResponse:
        tunnels = await self._service.tunnels(caller(), request.tenant_id)
        return admin_pb2.ListTunnelsResponse(items=[_tunnel(t) for t in tunnels])

    async def RemoveTunnel(
        self, request: admin_pb2.RemoveTunnelRequest, context: grpc.aio.ServicerContext
    ) -> admin_pb2.RemoveTunnelResponse:
        await self._service.remove_tunnel(caller(), request.tenant_id, request.id)
        return admin_pb2.RemoveTunnelResponse(id=request.id)


def _key(k: ApiKeyInfo) -> admin_pb2.ApiKey:
    return admin_pb2.ApiKey(
        id=k.key_id,
        principal_id=k.principal_id,
        scopes=k.scopes,
        label=k.label,
        created_at=timestamp(k.created_at),
        revoked_at=timestamp(k.revoked_at),
        last_used_at=timestamp(k.last_used_at),
    )


def _config(c: TenantConfig) -> admin_pb2.TenantConfigResponse:
    return admin_pb2.TenantConfigResponse(
        tenant_id=c.tenant_id, config_json=json.dumps(c.config), version=c.version, public_enabled=c.public_enabled
    )


def _kind(k: dict[str, Any]) -> admin_pb2.Kind:
    return admin_pb2.Kind(**{name: k[name] for name in ("name", "built_in", *KIND_FLAGS)})


def _tunnel(t: Tunnel) -> admin_pb2.Tunnel:
    return admin_pb2.Tunnel(
        id=t.id,
        from_wing=t.from_wing,
        from_room=t.from_room,
        to_wing=t.to_wing,
        to_room=t.to_room,
        created_by=t.created_by or "",
        created_at=timestamp(t.created_at),
    )
