-- bench/hybrid.sh: the best config of one device, its three deployments
ops { "dwave" }
param("align", { 32 })
param("by", { 8 })
param("l2pf", { 256 })
param("lb", { 512 })
param("lds", { 2 })
param("nw", { 256, 16 })
param("pf", { 4 })
param("tile", { 2 })
param("vec", { 2 })
param("deploy", { "complete", "inout", "sides" })
constrain("these configs alone", function(c, dev, prob)
  local s = {}
  s["align=32,by=8,deploy=complete,l2pf=256,lb=512,lds=2,nw=256,pf=4,tile=2,vec=2"] = true
  s["align=32,by=8,deploy=inout,l2pf=256,lb=512,lds=2,nw=256,pf=4,tile=2,vec=2"] = true
  s["align=32,by=8,deploy=sides,l2pf=256,lb=512,lds=2,nw=16,pf=4,tile=2,vec=2"] = true
  local t = {}
  for _, k in ipairs({"align", "by", "deploy", "l2pf", "lb", "lds", "nw", "pf", "tile", "vec"}) do t[#t + 1] = k .. "=" .. tostring(c[k]) end
  return s[table.concat(t, ",")] == true
end)
strategy "exhaustive"
budget(3)
default { align = 32, by = 8, l2pf = 256, lb = 512, lds = 2, nw = 256, pf = 4, tile = 2, vec = 2, deploy = "complete" }
